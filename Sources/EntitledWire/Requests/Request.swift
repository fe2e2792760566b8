import EntitledCore

/// A decoded, validated request: everything an operation needs, typed.
public enum Request: Sendable {
    case ping
    case grant(Grant)
    case check(AccessQuery)
    case claim(device: String, user: String)
    case revoke(MembershipID, reason: String?)
    /// List what `subject` sees; statuses are computed at `moment` (now if `nil`).
    case memberships(Subject, moment: Timestamp?)
    case define(entitlement: String, products: [String])
    case catalog
    /// Write a snapshot of the whole state now (an admin operation).
    case snapshot

    /// The operation's name on the wire.
    public var op: Operation {
        switch self {
        case .ping: return .ping
        case .grant: return .grant
        case .check: return .check
        case .claim: return .claim
        case .revoke: return .revoke
        case .memberships: return .memberships
        case .define: return .define
        case .catalog: return .catalog
        case .snapshot: return .snapshot
        }
    }

    /// The operations, by their names on the wire.
    public enum Operation: String, Sendable, CaseIterable {
        case ping, grant, check, claim, revoke, memberships, define, catalog, snapshot
    }
}
