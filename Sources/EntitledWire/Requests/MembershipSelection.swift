import EntitledCore

/// Which memberships a `memberships` request lists: what a subject sees, the memberships holding a store
/// transaction, or those of a source.
public enum MembershipSelection: Sendable, Hashable {
    /// What a user or device sees (`user`, `device`).
    case visible(to: Subject)
    /// The memberships holding this store transaction (`transactionId`): a purchase or any later one.
    case transaction(String)
    /// The memberships of the subscription this transaction started (`originalTransactionId`).
    case originalTransaction(String)
    /// The memberships of a source (`source`), oldest first, for a reconciliation with the store: with
    /// `endedAfter`, only those whose access had not ended before it. Its own cursor, a position
    /// (`SourceCursor`) rather than a membership: the request's `after` is `nil` with it.
    case source(PurchaseSource, endedAfter: Timestamp?, after: SourceCursor?)
}
