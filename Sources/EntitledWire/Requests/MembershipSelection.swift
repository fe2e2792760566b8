import EntitledCore

/// Which memberships a `memberships` request lists: what a subject sees, or the memberships holding a
/// store transaction.
public enum MembershipSelection: Sendable, Hashable {
    /// What a user or device sees (`user`, `device`).
    case visible(to: Subject)
    /// The memberships holding this store transaction (`transactionId`): a purchase or any later one.
    case transaction(String)
    /// The memberships of the subscription this transaction started (`originalTransactionId`).
    case originalTransaction(String)
}
