import Foundation

/// One entry of the auth file a `RunningEntitled` is started with (`entitled --auth FILE`).
public struct AuthFileEntry: Sendable, Hashable {
    public let name: String
    public let token: String
    /// `admin`, `writer` or `check`.
    public let role: String

    public init(name: String, token: String, role: String) {
        self.name = name
        self.token = token
        self.role = role
    }

    /// An admin token and a check token, long enough for the server (at least 16 bytes).
    public static let admin = AuthFileEntry(name: "billing", token: "admin-secret-7f3a9c2e51b84d06", role: "admin")
    public static let check = AuthFileEntry(name: "reader", token: "check-secret-0b6e4a91d27c53f8", role: "check")
    /// A writer token: what `entitled-stores` is given.
    public static let writer = AuthFileEntry(name: "stores", token: "writer-secret-5c1d8e7a3b9f4260", role: "writer")

    /// Writes `tokens` as an auth file at `path`, readable by its owner only (the server warns otherwise).
    public static func writeAuthFile(_ tokens: [AuthFileEntry], to path: String) throws {
        let entries = tokens.map { ["name": $0.name, "token": $0.token, "role": $0.role] }
        let data = try JSONSerialization.data(withJSONObject: entries)
        guard FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw TestSupportFailure(description: "cannot write the auth file \(path)")
        }
    }
}
