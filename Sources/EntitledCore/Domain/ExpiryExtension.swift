/// How a manual extension (`EntitlementStore.extend`) moves a membership's expiry.
public enum ExpiryExtension: Hashable, Sendable {
    /// This much later than the expiry, or than the moment of the extension when the membership has
    /// already expired: a support agent's "give them one more month" gives a month of access either way.
    case by(TimeSpan)
    /// To this moment, which must be later than both the expiry and the moment of the extension.
    case until(Timestamp)

    /// The new expiry of a membership that expires at `expiresAt`, extended at `now`.
    func newExpiry(from expiresAt: Timestamp, now: Timestamp) -> Timestamp {
        switch self {
        case .by(let span): max(expiresAt, now).adding(span)
        case .until(let moment): moment
        }
    }
}
