/// What a subject has, in the shape of the SDKs' CustomerInfo (RevenueCat's `CustomerInfo`, Qonversion's
/// entitlements): one entry per entitlement it ever had, the products active now, every product it ever
/// bought. Built by `EntitlementStore.customerInfo(of:)`.
public struct CustomerInfo: Hashable, Sendable {
    /// By entitlement name: the entitlements of the catalog that one of the subject's memberships
    /// (revoked ones aside) unlocks or unlocked.
    public var entitlements: [String: EntitlementInfo]
    /// The products of the memberships active at `requestDate`, sorted, without duplicates.
    public var activeProducts: [String]
    /// The products of every membership, active or not (revoked ones aside), sorted, without duplicates.
    public var allPurchasedProductIds: [String]
    /// The latest `expiresAt` of those memberships; `nil` when none expires.
    public var latestExpirationDate: Timestamp?
    /// When the store first saw the subject: its oldest membership's creation; `nil` without any (the
    /// store keeps no record of subjects without memberships).
    public var firstSeen: Timestamp?
    /// The moment the view describes.
    public var requestDate: Timestamp

    /// One entitlement of a subject, as RevenueCat's `EntitlementInfo` describes it: the membership that
    /// gives it (the active one that lasts longest, else the one that ended last).
    public struct EntitlementInfo: Hashable, Sendable {
        public var isActive: Bool
        public var productId: String
        public var expiresAt: Timestamp?
        public var willRenew: Bool
        public var periodType: PeriodType
        /// Where it was bought.
        public var store: PurchaseSource
        /// The newest purchase or renewal of that membership.
        public var latestPurchaseDate: Timestamp
        /// Its first purchase.
        public var originalPurchaseDate: Timestamp
        public var billingIssueDetectedAt: Timestamp?
        public var unsubscribeDetectedAt: Timestamp?
        /// The membership it describes.
        public var membershipId: MembershipID
    }

    /// The view of `memberships` at `moment`, with `catalog` (entitlement to its products) naming the
    /// entitlements.
    public init(memberships: [Membership], catalog: [(entitlement: String, products: [String])], at moment: Timestamp) {
        let held = memberships.filter { $0.revocation == nil }
        requestDate = moment
        firstSeen = memberships.map(\.createdAt).min()
        latestExpirationDate = held.compactMap(\.expiresAt).max()
        activeProducts = Set(held.filter { $0.isActive(at: moment) }.map(\.productId)).sorted()
        allPurchasedProductIds = Set(held.map(\.productId)).sorted()
        var entitlements: [String: EntitlementInfo] = [:]
        for (entitlement, products) in catalog {
            let candidates = held.filter { products.contains($0.productId) }
            guard let best = Self.representative(of: candidates, at: moment) else { continue }
            entitlements[entitlement] = EntitlementInfo(best, at: moment)
        }
        self.entitlements = entitlements
    }

    /// The membership an entitlement is described by: among the active, the one that lasts longest
    /// (lifetime first); with none active, the one whose access ended last.
    private static func representative(of memberships: [Membership], at moment: Timestamp) -> Membership? {
        func end(_ membership: Membership) -> Int64 { membership.accessStops?.millisecondsSinceEpoch ?? .max }
        let active = memberships.filter { $0.isActive(at: moment) }
        return (active.isEmpty ? memberships : active).max { end($0) < end($1) }
    }
}

extension CustomerInfo.EntitlementInfo {
    init(_ membership: Membership, at moment: Timestamp) {
        let lifecycle = membership.lifecycle
        isActive = membership.isActive(at: moment)
        productId = membership.productId
        expiresAt = membership.accessEnd
        willRenew = lifecycle.willRenew
        periodType = lifecycle.periodType
        store = membership.source
        latestPurchaseDate = lifecycle.transactions.last?.time ?? membership.createdAt
        originalPurchaseDate = lifecycle.transactions.first?.time ?? membership.createdAt
        billingIssueDetectedAt = lifecycle.billingIssueDetectedAt
        unsubscribeDetectedAt = lifecycle.unsubscribeDetectedAt
        membershipId = membership.id
    }
}
