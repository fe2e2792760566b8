/// One entry of the auth file: a client's name, its secret and its role.
public struct AccessToken: Sendable, CustomStringConvertible {
    /// Who the client is: the audit trail's actor for its changes, and the name the logs use.
    public let name: String
    public let role: AccessRole
    /// The secret's UTF-8 bytes, compared byte for byte (no Unicode normalisation).
    let secret: [UInt8]

    public init(name: String, token: String, role: AccessRole) {
        self.name = name
        self.role = role
        self.secret = Array(token.utf8)
    }

    /// Never shows the secret, so that logging a token by mistake leaks nothing.
    public var description: String { "\(name) (\(role.rawValue))" }
}
