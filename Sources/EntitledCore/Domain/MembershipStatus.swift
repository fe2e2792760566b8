/// The state of a membership at one moment. Always computed from the membership and that moment,
/// never stored, so it cannot go stale.
public enum MembershipStatus: String, Sendable, CaseIterable {
    /// Grants access: not revoked, and lifetime or not yet expired.
    case active
    /// Its `expiresAt` has passed.
    case expired
    /// Taken back (refund, chargeback, an admin); a revoked membership never grants access again.
    case revoked

    /// Whether a membership in this status grants access.
    @inlinable
    public var grantsAccess: Bool { self == .active }
}
