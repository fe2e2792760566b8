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

    /// A server without authentication: everything, as `local`.
    public static let open = ConnectionAccess(
        permissions: .everything, actor: ChangeContext.localActor, authenticationRequired: false
    )

    /// A connection of a server with authentication that has not authenticated (or failed to): `ping`,
    /// `hello` and `auth` only, everything else `unauthorized`.
    public static let anonymous = ConnectionAccess(
        permissions: OperationPermissions(allowing: [.ping, .hello, .auth], refusalCode: .unauthorized),
        actor: "",
        authenticationRequired: true
    )

    /// A connection authenticated with `token`.
    public static func authenticated(as token: AccessToken) -> ConnectionAccess {
        ConnectionAccess(permissions: token.role.permissions, actor: token.name, authenticationRequired: true)
    }
}
