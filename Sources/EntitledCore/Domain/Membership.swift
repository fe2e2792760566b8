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
    /// Set once the membership is revoked; revocation is final, but for the `refundReversal` event of the
    /// refund that made it (`Membership.reverses(_:)`).
    public var revocation: Revocation?
    /// The lifecycle when it is not `.standard`, out of line (one reference here): see `lifecycle`.
    @usableFromInline var lifecycleStorage: LifecycleStorage?

    /// Renewal, cancellation, billing, pauses and the events applied so far.
    public var lifecycle: MembershipLifecycle {
        get { lifecycleStorage?.value ?? .standard }
        set { lifecycleStorage = newValue == .standard ? nil : LifecycleStorage(newValue) }
    }

    public init(
        id: MembershipID,
        productId: String,
        planId: String? = nil,
        device: String? = nil,
        user: String? = nil,
        createdAt: Timestamp,
        expiresAt: Timestamp? = nil,
        source: PurchaseSource = .default,
        revocation: Revocation? = nil,
        lifecycle: MembershipLifecycle = .standard
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
        self.lifecycle = lifecycle
    }

    /// Whether its lifecycle is not `.standard`: then reading `lifecycle` is worth its copy. Writers of
    /// the common, standard case test this first (a `lifecycle` read copies the whole struct).
    public var hasLifecycle: Bool { lifecycleStorage != nil }

    /// Whether no user owns it yet (a guest purchase waiting for a claim).
    public var isUnclaimed: Bool { user == nil }

    /// The status at `moment`, the first that holds of:
    /// - revoked: a refund voids the purchase whatever moment is asked about;
    /// - paused: paused at or before `moment`;
    /// - expired: access ended at or before `moment` (`expiresAt`, or a billing issue's grace period
    ///   when that ends later);
    /// - past due: a billing issue, still within its access;
    /// - canceled: renewal turned off, still within its access;
    /// - trialing: a trial period;
    /// - else active.
    @inlinable
    public func status(at moment: Timestamp) -> MembershipStatus {
        if revocation != nil { return .revoked }
        guard let lifecycle = lifecycleStorage?.value else {
            if let expiresAt, expiresAt <= moment { return .expired }
            return .active
        }
        if let pausedAt = lifecycle.pausedAt, pausedAt <= moment { return .paused }
        if let end = Self.accessEnd(expiresAt: expiresAt, lifecycle: lifecycle), end <= moment { return .expired }
        if lifecycle.billingIssueDetectedAt != nil { return .pastDue }
        if lifecycle.unsubscribeDetectedAt != nil, !lifecycle.willRenew { return .canceled }
        if lifecycle.periodType == .trial { return .trialing }
        return .active
    }

    /// When access ends, not counting a pause: `expiresAt`, or the end of a billing issue's grace period
    /// when that is later. `nil`: never (lifetime).
    public var accessEnd: Timestamp? {
        guard let stored = lifecycleStorage else { return expiresAt }
        return Self.accessEnd(expiresAt: expiresAt, lifecycle: stored.value)
    }

    /// When access stops, whatever the reason other than a revocation: the earlier of `accessEnd` and a
    /// pause. `nil`: never. What the check path compares with the moment asked about.
    public var accessStops: Timestamp? {
        guard let stored = lifecycleStorage else { return expiresAt }
        let end = Self.accessEnd(expiresAt: expiresAt, lifecycle: stored.value)
        guard let pausedAt = stored.value.pausedAt else { return end }
        guard let end else { return pausedAt }
        return min(end, pausedAt)
    }

    @inlinable
    static func accessEnd(expiresAt: Timestamp?, lifecycle: MembershipLifecycle) -> Timestamp? {
        guard let expiresAt else { return nil }
        guard lifecycle.billingIssueDetectedAt != nil, let grace = lifecycle.gracePeriodExpiresAt else { return expiresAt }
        return max(expiresAt, grace)
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
    /// What a `refund` event records; a `refund_reversal` event undoes a revocation with this reason only.
    public static let refundReason = "refund"

    public init(revokedAt: Timestamp, reason: String) {
        self.revokedAt = revokedAt
        self.reason = reason
    }
}
