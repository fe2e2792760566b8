/// What happened to a membership after its purchase: renewal, cancellation, billing, pauses, and the
/// lifecycle events already applied to it.
///
/// Most memberships never leave the `standard` lifecycle (a manual grant, a lifetime purchase), and a
/// `Membership` keeps a non-standard one out of line (see `Membership.lifecycle`), so the memory of a
/// million plain memberships does not pay for fields they never use.
public struct MembershipLifecycle: Hashable, Sendable {
    /// Whether it renews at the end of the period: false after a cancellation.
    public var willRenew: Bool
    public var periodType: PeriodType
    /// Renewals so far (the first paid period counts as none).
    public var renewsCount: Int
    /// When a cancellation was seen; `nil` again after an uncancellation.
    public var unsubscribeDetectedAt: Timestamp?
    /// When the store reported it could not charge; `nil` again once billing recovered.
    public var billingIssueDetectedAt: Timestamp?
    /// Until when a billing issue keeps access (the store's grace period), even past `expiresAt`.
    public var gracePeriodExpiresAt: Timestamp?
    /// From when access is paused; `nil` when not paused.
    public var pausedAt: Timestamp?
    public var environment: PurchaseEnvironment
    public var ownership: Ownership
    public var grantType: GrantType
    /// The store's transactions, oldest first.
    public var transactions: [PurchaseTransaction]
    /// The `eventTime` of the newest event applied: older events are ignored as out of order.
    public var newestEventTime: Timestamp?
    /// The ids of the events applied, oldest first: a redelivered event is ignored as a duplicate.
    public var appliedEventIDs: [String]

    public init(
        willRenew: Bool = false, periodType: PeriodType = .normal, renewsCount: Int = 0,
        unsubscribeDetectedAt: Timestamp? = nil, billingIssueDetectedAt: Timestamp? = nil,
        gracePeriodExpiresAt: Timestamp? = nil, pausedAt: Timestamp? = nil,
        environment: PurchaseEnvironment = .production, ownership: Ownership = .purchased,
        grantType: GrantType = .purchase, transactions: [PurchaseTransaction] = [],
        newestEventTime: Timestamp? = nil, appliedEventIDs: [String] = []
    ) {
        self.willRenew = willRenew
        self.periodType = periodType
        self.renewsCount = renewsCount
        self.unsubscribeDetectedAt = unsubscribeDetectedAt
        self.billingIssueDetectedAt = billingIssueDetectedAt
        self.gracePeriodExpiresAt = gracePeriodExpiresAt
        self.pausedAt = pausedAt
        self.environment = environment
        self.ownership = ownership
        self.grantType = grantType
        self.transactions = transactions
        self.newestEventTime = newestEventTime
        self.appliedEventIDs = appliedEventIDs
    }

    /// A membership's lifecycle before anything happened to it.
    public static let standard = MembershipLifecycle()

    /// What happens at the end of the period.
    public var renewState: RenewState {
        if billingIssueDetectedAt != nil { return .billingIssue }
        if willRenew { return .willRenew }
        if unsubscribeDetectedAt != nil { return .canceled }
        return .nonRenewable
    }
}

/// A `MembershipLifecycle` kept out of line: one reference in every `Membership`, shared by copies and
/// replaced, never mutated, when the lifecycle changes.
@usableFromInline
final class LifecycleStorage: Hashable, Sendable {
    @usableFromInline let value: MembershipLifecycle

    init(_ value: MembershipLifecycle) {
        self.value = value
    }

    @usableFromInline
    static func == (lhs: LifecycleStorage, rhs: LifecycleStorage) -> Bool {
        lhs === rhs || lhs.value == rhs.value
    }

    @usableFromInline
    func hash(into hasher: inout Hasher) {
        hasher.combine(value)
    }
}
