import PostgresNIO

/// What a PostgresNIO error says, for people: PostgresNIO's own `description` hides the server's message
/// (it may quote data), and entitled's messages must name what to fix. Never includes the password: the
/// server's messages do not hold it, and connection settings are not printed.
struct DatabaseFailure: Error, Sendable, CustomStringConvertible {
    /// The SQLSTATE the server sent, if it sent one (`28P01` wrong password, `3D000` no such database, ...).
    var sqlState: String?
    var description: String

    init(_ error: any Error) {
        if let failure = error as? DatabaseFailure {
            self = failure
            return
        }
        guard let error = error as? PSQLError else {
            sqlState = nil
            description = "\(error)"
            return
        }
        sqlState = error.serverInfo?[.sqlState]
        if let message = error.serverInfo?[.message] {
            let detail = error.serverInfo?[.detail].map { " (\($0))" } ?? ""
            description = message + detail + (sqlState.map { " [SQLSTATE \($0)]" } ?? "")
        } else if let underlying = error.underlying {
            description = Self.describe(underlying)
        } else {
            description = "\(error.code)"
        }
    }

    init(timeout: String) {
        sqlState = nil
        description = timeout
    }

    private static func describe(_ error: any Error) -> String {
        let text = "\(error)"
        if text.contains("connection reset") || text.contains("Connection reset") { return "the connection was reset" }
        if text.contains("refused") { return "connection refused" }
        return text
    }

    /// Whether the server said the role lacks a privilege.
    var isPermission: Bool { sqlState == "42501" }
    /// Whether the password or the role was refused.
    var isAuthentication: Bool { sqlState == "28P01" || sqlState == "28000" }
    /// Whether the server is a standby in recovery, which refuses to write (and WAL control functions).
    var isRecovery: Bool { sqlState == "55000" && description.contains("recovery is in progress") }
    /// Whether the database named in the URL does not exist.
    var isMissingDatabase: Bool { sqlState == "3D000" }
}
