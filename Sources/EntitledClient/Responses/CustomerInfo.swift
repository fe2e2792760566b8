/// What a subject is entitled to, as a `customer` response carries it: the shape of RevenueCat's
/// CustomerInfo. Times stay the RFC 3339 text the server wrote.
public struct CustomerInfo: Sendable, Hashable {
    /// Each entitlement the subject has or had, by name, in the server's order (sorted by name).
    public var entitlements: [(name: String, info: EntitlementInfo)]
    /// The products of the memberships that grant access now.
    public var activeProducts: [String]
    /// The products of every membership, active or not (revoked ones aside).
    public var allPurchasedProductIds: [String]
    /// The latest expiry of any membership; `nil` when none expires (or there are none).
    public var latestExpirationDate: String?
    /// When the first of the subject's memberships was created; `nil` when it has none.
    public var firstSeen: String?
    /// The moment the answer describes (the server's now).
    public var requestDate: String

    /// Reads a customer object; `nil` when a required field is missing or of the wrong type.
    public init?(json: JSONValue) {
        guard let entitlements = json["entitlements"]?.objectMembers, let requestDate = json["requestDate"]?.stringValue
        else { return nil }
        self.entitlements = entitlements.compactMap { member in
            EntitlementInfo(json: member.value).map { (member.key, $0) }
        }
        self.activeProducts = json["activeProducts"]?.arrayValue?.compactMap(\.stringValue) ?? []
        self.allPurchasedProductIds = json["allPurchasedProductIds"]?.arrayValue?.compactMap(\.stringValue) ?? []
        self.latestExpirationDate = json["latestExpirationDate"]?.stringValue
        self.firstSeen = json["firstSeen"]?.stringValue
        self.requestDate = requestDate
    }

    /// The entitlement named `name`.
    public subscript(entitlement name: String) -> EntitlementInfo? {
        entitlements.first { $0.name == name }?.info
    }

    public static func == (left: CustomerInfo, right: CustomerInfo) -> Bool {
        left.entitlements.map(\.name) == right.entitlements.map(\.name)
            && left.entitlements.map(\.info) == right.entitlements.map(\.info) && left.activeProducts == right.activeProducts
            && left.allPurchasedProductIds == right.allPurchasedProductIds
            && left.latestExpirationDate == right.latestExpirationDate && left.firstSeen == right.firstSeen
            && left.requestDate == right.requestDate
    }

    public func hash(into hasher: inout Hasher) {
        for entitlement in entitlements {
            hasher.combine(entitlement.name)
            hasher.combine(entitlement.info)
        }
        hasher.combine(activeProducts)
        hasher.combine(allPurchasedProductIds)
        hasher.combine(latestExpirationDate)
        hasher.combine(firstSeen)
        hasher.combine(requestDate)
    }
}

/// One entitlement of a `customer` answer: the membership that gives it (the best one the subject has).
public struct EntitlementInfo: Sendable, Hashable {
    public var isActive: Bool
    public var productId: String
    /// The id of the membership behind it.
    public var membership: String
    /// `nil` for a lifetime membership.
    public var expiresAt: String?
    public var willRenew: Bool
    public var periodType: String
    /// The purchase's source (`app_store`, `stripe`, ...).
    public var store: String
    public var latestPurchaseDate: String?
    public var originalPurchaseDate: String?
    public var billingIssueDetectedAt: String?
    public var unsubscribeDetectedAt: String?

    /// Reads an entitlement object; `nil` when a required field is missing or of the wrong type.
    public init?(json: JSONValue) {
        guard let isActive = json["isActive"]?.boolValue, let productId = json["productId"]?.stringValue else { return nil }
        self.isActive = isActive
        self.productId = productId
        self.membership = json["membership"]?.stringValue ?? ""
        self.expiresAt = json["expiresAt"]?.stringValue
        self.willRenew = json["willRenew"]?.boolValue ?? false
        self.periodType = json["periodType"]?.stringValue ?? "normal"
        self.store = json["store"]?.stringValue ?? ""
        self.latestPurchaseDate = json["latestPurchaseDate"]?.stringValue
        self.originalPurchaseDate = json["originalPurchaseDate"]?.stringValue
        self.billingIssueDetectedAt = json["billingIssueDetectedAt"]?.stringValue
        self.unsubscribeDetectedAt = json["unsubscribeDetectedAt"]?.stringValue
    }
}

/// One entry of a `history` answer: a change, who made it, when and why, and what it left behind.
public struct HistoryEntry: Sendable, Hashable {
    /// When the server recorded the change.
    public var time: String
    /// Who made it (`local` for a change made without authentication).
    public var actor: String
    /// `grant`, `claim`, `revoke`, `transfer`, `extend`, an event type (`renewal`, `refund`, ...), `define`, `undefine` or `erase`.
    public var action: String
    public var reason: String?
    /// The number of the change in the server's log, when it is kept.
    public var sequence: Int?
    /// For an event: the store's id of the event and when the store says it happened.
    public var eventId: String?
    public var eventTime: String?
    /// For `extend`: the expiry before the extension (the membership shows the one after it).
    public var previousExpiresAt: String?
    /// For a membership's change: the membership as the change left it (its status as of the change).
    public var membership: MembershipInfo?
    /// For `define`: the entitlement and the products that unlock it from then on; for `undefine`, the
    /// products it had.
    public var entitlement: String?
    public var products: [String]?
    /// For `erase`: what it removed (the entry names no one).
    public var erased: ErasureCounts?

    /// Reads a history entry; `nil` when a required field is missing or of the wrong type.
    public init?(json: JSONValue) {
        guard let time = json["time"]?.stringValue, let action = json["action"]?.stringValue else { return nil }
        self.time = time
        self.actor = json["actor"]?.stringValue ?? ""
        self.action = action
        self.reason = json["reason"]?.stringValue
        self.sequence = json["sequence"]?.intValue
        self.eventId = json["eventId"]?.stringValue
        self.eventTime = json["eventTime"]?.stringValue
        self.previousExpiresAt = json["previousExpiresAt"]?.stringValue
        self.membership = json["membership"].flatMap(MembershipInfo.init(json:))
        self.entitlement = json["entitlement"]?.stringValue
        self.products = json["products"]?.arrayValue?.compactMap(\.stringValue)
        self.erased = json["erased"].flatMap(ErasureCounts.init(json:))
    }
}
