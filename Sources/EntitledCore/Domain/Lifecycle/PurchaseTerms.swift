/// What is known of a subscription when it is bought: the part of a `MembershipLifecycle` a `grant` sets.
/// The rest (renewals, cancellation, billing, pauses) only lifecycle events set.
///
/// Five bytes, not the whole lifecycle: a `Grant` is copied several times on its way to the store, and
/// carrying a full `MembershipLifecycle` (arrays, optional times) cost a grant about 400 instructions of
/// copies and reference counting in callgrind.
public struct PurchaseTerms: Hashable, Sendable {
    public var willRenew: Bool
    public var periodType: PeriodType
    public var environment: PurchaseEnvironment
    public var ownership: Ownership
    public var grantType: GrantType

    public init(
        willRenew: Bool = false, periodType: PeriodType = .normal, environment: PurchaseEnvironment = .production,
        ownership: Ownership = .purchased, grantType: GrantType = .purchase
    ) {
        self.willRenew = willRenew
        self.periodType = periodType
        self.environment = environment
        self.ownership = ownership
        self.grantType = grantType
    }

    /// The terms of `MembershipLifecycle.standard`: a purchase that does not renew.
    public static let standard = PurchaseTerms()
}
