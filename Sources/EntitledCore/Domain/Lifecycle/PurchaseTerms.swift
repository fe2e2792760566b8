/// What is known of a subscription when it is bought: the part of a `MembershipLifecycle` a `grant` sets.
/// The rest (cancellation, billing, pauses, later renewals) only lifecycle events set.
///
/// A few plain bytes, not the whole lifecycle: a `Grant` is copied several times on its way to the store,
/// and carrying a full `MembershipLifecycle` (arrays, optional times) cost a grant about 400 instructions
/// of copies and reference counting in callgrind.
public struct PurchaseTerms: Hashable, Sendable {
    public var willRenew: Bool
    public var periodType: PeriodType
    public var environment: PurchaseEnvironment
    public var ownership: Ownership
    public var grantType: GrantType
    /// Renewals the store made before the purchase was imported, whose times the source does not give
    /// (Google's order id suffix `..N`, RevenueCat's `renewal_number`); 0 for a purchase made now. Later
    /// `renewal` events add to it.
    public var renewsCount: Int

    public init(
        willRenew: Bool = false, periodType: PeriodType = .normal, environment: PurchaseEnvironment = .production,
        ownership: Ownership = .purchased, grantType: GrantType = .purchase, renewsCount: Int = 0
    ) {
        self.willRenew = willRenew
        self.periodType = periodType
        self.environment = environment
        self.ownership = ownership
        self.grantType = grantType
        self.renewsCount = renewsCount
    }

    /// The terms of `MembershipLifecycle.standard`: a purchase that does not renew.
    public static let standard = PurchaseTerms()
}
