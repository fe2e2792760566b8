/// Why the store refused an operation.
public enum StoreError: Error, Hashable, Sendable {
    /// No membership has this id.
    case unknownMembership(MembershipID)
    /// The catalog does not define this entitlement.
    case unknownEntitlement(String)

    /// A stable machine-readable code for the failure.
    public var code: Code {
        switch self {
        case .unknownMembership, .unknownEntitlement: return .notFound
        }
    }

    /// A sentence a person can act on.
    public var message: String {
        switch self {
        case .unknownMembership(let id):
            return "no membership has the id \"\(id)\""
        case .unknownEntitlement(let name):
            return "the catalog has no entitlement \"\(name)\"; define it first or check a product instead"
        }
    }

    public enum Code: String, Sendable {
        case notFound = "not_found"
    }
}
