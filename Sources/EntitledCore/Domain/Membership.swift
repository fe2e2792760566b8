/// One purchase or grant of one product.
///
/// A membership bought without login is a *guest* membership: it has a `device` and no `user` until a
/// claim gives it to the user who logs in on that device. Duplicates are never merged: buying the same
/// product twice gives two memberships, each active until it expires.
public struct Membership: Hashable, Sendable {
    public var id: MembershipID
    public var productId: String
    public var planId: String?
    /// The device it was bought on, if any. Kept after a claim: it records where the purchase happened.
    public var device: String?
    /// The user that owns it: set at purchase when logged in, or by a claim.
    public var user: String?
    public var createdAt: Timestamp
    /// When access ends; `nil` is lifetime access.
    public var expiresAt: Timestamp?
    public var source: PurchaseSource
    /// Set once the membership is revoked; revocation is final.
    public var revocation: Revocation?

    public init(
        id: MembershipID,
        productId: String,
        planId: String? = nil,
        device: String? = nil,
        user: String? = nil,
        createdAt: Timestamp,
        expiresAt: Timestamp? = nil,
        source: PurchaseSource = .default,
        revocation: Revocation? = nil
    ) {
        self.id = id
        self.productId = productId
        self.planId = planId
        self.device = device
        self.user = user
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.source = source
        self.revocation = revocation
    }

    /// Whether no user owns it yet (a guest purchase waiting for a claim).
    public var isUnclaimed: Bool { user == nil }

    /// The status at `moment`: revoked wins over everything (a refund voids the purchase whatever moment
    /// is asked about), then expired when `expiresAt` is at or before `moment`, else active.
    @inlinable
    public func status(at moment: Timestamp) -> MembershipStatus {
        if revocation != nil { return .revoked }
        if let expiresAt, expiresAt <= moment { return .expired }
        return .active
    }

    /// Whether it grants access at `moment`.
    @inlinable
    public func isActive(at moment: Timestamp) -> Bool {
        status(at: moment).grantsAccess
    }
}

/// Why and when a membership was taken back.
public struct Revocation: Hashable, Sendable {
    public var revokedAt: Timestamp
    /// Free text such as `refund`, `chargeback` or `manual`.
    public var reason: String

    /// What a revoke that gives no reason records.
    public static let defaultReason = "manual"

    public init(revokedAt: Timestamp, reason: String) {
        self.revokedAt = revokedAt
        self.reason = reason
    }
}
