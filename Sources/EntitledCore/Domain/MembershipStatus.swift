/// The state of a membership at one moment. Always computed from the membership and that moment,
/// never stored, so it cannot go stale.
public enum MembershipStatus: String, Sendable, CaseIterable {
    /// Grants access: not revoked, and lifetime or not yet expired.
    case active
    /// In a free trial: grants access.
    case trialing
    /// The store could not charge for a renewal: grants access until the period (or its grace period)
    /// ends.
    case pastDue = "past_due"
    /// Will not renew: grants access until it expires.
    case canceled
    /// Paused: no access until resumed.
    case paused
    /// Its access has ended (`expiresAt`, or a billing issue's grace period).
    case expired
    /// Taken back (refund, chargeback, an admin); a revoked membership never grants access again.
    case revoked

    /// Whether a membership in this status grants access.
    @inlinable
    public var grantsAccess: Bool {
        switch self {
        case .active, .trialing, .pastDue, .canceled: true
        case .paused, .expired, .revoked: false
        }
    }
}
