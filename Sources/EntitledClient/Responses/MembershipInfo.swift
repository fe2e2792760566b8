/// A membership as a response carries it (Protocol/PROTOCOL.md, "The membership object"). Times stay the
/// RFC 3339 text the server wrote, which is always UTC.
public struct MembershipInfo: Sendable, Hashable {
    public var id: String
    public var productId: String
    public var planId: String?
    public var user: String?
    public var device: String?
    /// `active`, `expired`, `revoked`, or a status a newer server added: judge those by `isActive`.
    public var status: String
    public var isActive: Bool
    public var createdAt: String
    /// `nil` for a lifetime membership.
    public var expiresAt: String?
    public var source: String
    public var revokedAt: String?
    public var reason: String?

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
    }
}
