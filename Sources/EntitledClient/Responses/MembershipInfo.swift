/// A membership as a response carries it (Protocol/PROTOCOL.md, "The membership object"). Times stay the
/// RFC 3339 text the server wrote, which is always UTC.
public struct MembershipInfo: Sendable, Hashable {
    public var id: String
    public var productId: String
    public var planId: String?
    public var user: String?
    public var device: String?
    /// `active`, `trialing`, `past_due`, `canceled`, `paused`, `expired`, `revoked`, or a status a newer
    /// server added: judge those by `isActive` (the first four grant access).
    public var status: String
    public var isActive: Bool
    public var createdAt: String
    /// `nil` for a lifetime membership.
    public var expiresAt: String?
    public var source: String
    public var revokedAt: String?
    public var reason: String?

    // The lifecycle. A server that predates it sends none of these fields: they then read as a plain
    // grant's (the defaults below), which is what its memberships are.

    /// Whether the store will renew the subscription at its expiry (default false).
    public var willRenew: Bool
    /// `normal`, `trial`, `intro` or `promotional` (default `normal`).
    public var periodType: String
    /// `will_renew`, `non_renewable`, `billing_issue` or `canceled` (default `non_renewable`).
    public var renewState: String
    /// How many renewals the membership has had (default 0).
    public var renewsCount: Int
    /// `production` or `sandbox` (default `production`).
    public var environment: String
    /// `purchased` or `family_shared` (default `purchased`).
    public var ownership: String
    /// `purchase`, `family_sharing`, `offer_code` or `manual` (default `purchase`).
    public var grantType: String
    /// When the customer turned renewal off; `nil` unless they did.
    public var unsubscribeDetectedAt: String?
    /// When the store reported a billing issue still unresolved; `nil` otherwise.
    public var billingIssueDetectedAt: String?
    /// The end of the grace period of a billing issue, when the store gave one.
    public var gracePeriodExpiresAt: String?
    /// When the subscription was paused, while it is.
    public var pausedAt: String?
    /// The store's transactions behind the membership, oldest first; empty when there are none.
    public var transactions: [TransactionInfo]

    /// Reads a membership object; `nil` when a required field is missing or of the wrong type.
    public init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue, let productId = json["productId"]?.stringValue,
            let status = json["status"]?.stringValue, let isActive = json["isActive"]?.boolValue,
            let createdAt = json["createdAt"]?.stringValue, let source = json["source"]?.stringValue
        else { return nil }
        self.id = id
        self.productId = productId
        self.planId = json["planId"]?.stringValue
        self.user = json["user"]?.stringValue
        self.device = json["device"]?.stringValue
        self.status = status
        self.isActive = isActive
        self.createdAt = createdAt
        self.expiresAt = json["expiresAt"]?.stringValue
        self.source = source
        self.revokedAt = json["revokedAt"]?.stringValue
        self.reason = json["reason"]?.stringValue
        self.willRenew = json["willRenew"]?.boolValue ?? false
        self.periodType = json["periodType"]?.stringValue ?? "normal"
        self.renewState = json["renewState"]?.stringValue ?? "non_renewable"
        self.renewsCount = json["renewsCount"]?.intValue ?? 0
        self.environment = json["environment"]?.stringValue ?? "production"
        self.ownership = json["ownership"]?.stringValue ?? "purchased"
        self.grantType = json["grantType"]?.stringValue ?? "purchase"
        self.unsubscribeDetectedAt = json["unsubscribeDetectedAt"]?.stringValue
        self.billingIssueDetectedAt = json["billingIssueDetectedAt"]?.stringValue
        self.gracePeriodExpiresAt = json["gracePeriodExpiresAt"]?.stringValue
        self.pausedAt = json["pausedAt"]?.stringValue
        self.transactions = json["transactions"]?.arrayValue?.compactMap(TransactionInfo.init(json:)) ?? []
    }
}

/// One store transaction of a membership (an element of its `transactions`).
public struct TransactionInfo: Sendable, Hashable {
    public var id: String
    public var originalTransactionId: String
    /// What the transaction was: the grant's or the event's kind, as the server names it.
    public var type: String
    public var time: String
    public var expiresAt: String?
    public var revokedAt: String?

    /// Reads a transaction object; `nil` when a required field is missing or of the wrong type.
    public init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue, let original = json["originalTransactionId"]?.stringValue,
            let type = json["type"]?.stringValue, let time = json["time"]?.stringValue
        else { return nil }
        self.id = id
        self.originalTransactionId = original
        self.type = type
        self.time = time
        self.expiresAt = json["expiresAt"]?.stringValue
        self.revokedAt = json["revokedAt"]?.stringValue
    }
}
