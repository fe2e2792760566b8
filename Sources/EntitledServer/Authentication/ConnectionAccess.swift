import EntitledCore
import EntitledWire

/// What one connection may do and whom its changes are attributed to. It starts as the server's
/// `initial` access and changes with each `auth` request.
public struct ConnectionAccess: Sendable {
    /// The operations the connection runs; the others are refused.
    public var permissions: OperationPermissions
    /// The audit trail's actor for the connection's changes: the token's name, or `local`.
    public var actor: String
    /// Whether the server requires authentication (`hello` says so).
    public var authenticationRequired: Bool
    /// Whether `watch` may name `all`.
    public var watchScope: WatchScope
    /// Whether `memberships` may list a whole `source`.
    public var listingScope: ListingScope

    /// A server without authentication: everything, as `local`.
    public static let open = ConnectionAccess(
        permissions: .everything, actor: ChangeContext.localActor, authenticationRequired: false, watchScope: .everything,
        listingScope: .everySubject
    )

    /// A connection of a server with authentication that has not authenticated (or failed to): `ping`,
    /// `hello` and `auth` only, everything else `unauthorized`.
    public static let anonymous = ConnectionAccess(
        permissions: OperationPermissions(allowing: [.ping, .hello, .auth], refusalCode: .unauthorized),
        actor: "",
        authenticationRequired: true,
        watchScope: .subjects,
        listingScope: .subjects
    )

    /// A connection authenticated with `token`.
    public static func authenticated(as token: AccessToken) -> ConnectionAccess {
        ConnectionAccess(
            permissions: token.role.permissions, actor: token.name, authenticationRequired: true, watchScope: token.role.watchScope,
            listingScope: token.role.listingScope
        )
    }
}

/// What a connection may watch.
public enum WatchScope: Sendable {
    /// Given users and devices only.
    case subjects
    /// Every subject too (`watch` with `all`).
    case everything
}

/// Which memberships a connection may list.
public enum ListingScope: Sendable {
    /// Those of subjects, transactions and purchases it names.
    case subjects
    /// Every membership of a source too (`memberships` with `source`): every customer of a store.
    case everySubject
}
