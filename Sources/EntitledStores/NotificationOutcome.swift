/// What a verified notification did in `entitled` (all of it acknowledged before the store is answered).
public enum NotificationOutcome: Hashable, Sendable {
    /// It changed something: `changes` writes were applied (a grant, events).
    case applied(changes: Int)
    /// Everything it says was applied before: a redelivery.
    case duplicate
    /// A notification this receiver does not act on (another event type, a test): answered 200.
    case ignored(String)
    /// It names a purchase no membership holds and gives no user to create it for: kept by the store's
    /// redelivery, counted, and logged.
    case unmatched(String)
    /// It names a purchase no membership holds yet, identified by `originalTransaction`: the receiver keeps
    /// it (`UnmatchedNotifications`) and applies it once a grant names that transaction.
    case awaitingPurchase(originalTransaction: String, reason: String)

    /// The metrics' name of the outcome.
    public var name: String {
        switch self {
        case .applied: "applied"
        case .duplicate: "duplicate"
        case .ignored: "ignored"
        case .unmatched, .awaitingPurchase: "unmatched"
        }
    }
}
