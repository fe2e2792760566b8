import EntitledWire

/// What an authenticated client may do (PROTOCOL.md, Authentication).
public enum AccessRole: String, Sendable, Hashable, CaseIterable {
    /// Reads: `ping`, `hello`, `auth`, `check`, `memberships`, `customer`, `catalog`, and `watch` and
    /// `unwatch` of given subjects (not `all`). For the services that ask whether a user may use something.
    case check
    /// What `check` may, and the writes a store's notifications and a backend's purchases make: `grant`,
    /// `claim`, `revoke` and `event`. Not `extend`, `erase`, `define`, `undefine`, `snapshot`, `history`,
    /// `stats`, `reload` or a watch of every subject. For `entitled-stores` and backends that only grant, so
    /// that a leaked token of theirs cannot erase people, change the catalog or read the audit trail.
    case writer
    /// Everything, writes (`undefine` and `erase` included) and the audit trail included. For back
    /// offices, webhooks and operators.
    case admin

    /// The operations the role runs; the others are refused `forbidden`.
    public var permissions: OperationPermissions {
        switch self {
        case .check: Self.checkPermissions
        case .writer: Self.writerPermissions
        case .admin: .everything
        }
    }

    /// What the role may watch. Every subject's changes at once is as much as the audit trail shows
    /// (every customer, every change), and costs the server a line per change: admin only.
    public var watchScope: WatchScope {
        switch self {
        case .check, .writer: .subjects
        case .admin: .everything
        }
    }

    /// What the role may list. Every membership of a source (`memberships` with `source`, for
    /// reconciliation) names every customer of a store: not for the `check` role, which asks about users it
    /// already knows.
    public var listingScope: ListingScope {
        switch self {
        case .check: .subjects
        case .writer, .admin: .everySubject
        }
    }

    private static let checkOperations: [Request.Operation] = [.ping, .hello, .auth, .check, .memberships, .customer, .catalog, .watch, .unwatch]
    private static let checkPermissions = OperationPermissions(allowing: checkOperations, refusalCode: .forbidden)
    private static let writerPermissions = OperationPermissions(
        allowing: checkOperations + [.grant, .claim, .revoke, .event], refusalCode: .forbidden
    )
}
