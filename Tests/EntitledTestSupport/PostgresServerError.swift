/// Why a test's PostgreSQL server could not do what it was asked; the message names what to fix and
/// carries the server's own words (the tail of its log, psql's output).
public enum PostgresServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// PostgreSQL cannot be had on this machine (see `PostgresServer.unavailableReason()`).
    case unavailable(reason: String)
    /// A PostgreSQL program (initdb, pg_ctl) failed; `output` is what it printed.
    case commandFailed(command: String, status: Int32, output: String)
    /// The server did not come up; `logTail` is the end of its log.
    case startFailed(port: Int, logTail: String)
    /// `psql` refused the SQL or could not connect; `output` is what it printed.
    case psqlFailed(sql: String, status: Int32, output: String)
    /// An operation that needs a running server was asked of a stopped one.
    case notRunning
    /// The temporary directory could not be made or handed to the server's user.
    case directoryFailed(path: String, reason: String)
    /// A standby (on `port`) had not replayed its primary's write-ahead log up to `target` within `timeout`:
    /// it got to `replayed`; `receiver` is what its walreceiver was doing.
    case notReplayed(port: Int, target: String, replayed: String, receiver: String, timeout: Duration)

    /// A stable machine-readable name for the case.
    public var code: String {
        switch self {
        case .unavailable: "unavailable"
        case .commandFailed: "command_failed"
        case .startFailed: "start_failed"
        case .psqlFailed: "psql_failed"
        case .notRunning: "not_running"
        case .directoryFailed: "directory_failed"
        case .notReplayed: "not_replayed"
        }
    }

    public var message: String {
        switch self {
        case .unavailable(let reason): "PostgreSQL is not available: \(reason)"
        case .commandFailed(let command, let status, let output): "\(command) exited with status \(status):\n\(output)"
        case .startFailed(let port, let logTail): "PostgreSQL did not start on port \(port); its log ends:\n\(logTail)"
        case .psqlFailed(let sql, let status, let output): "psql exited with status \(status) for \(sql.prefix(200)):\n\(output)"
        case .notRunning: "the PostgreSQL server is not running (start() it first)"
        case .directoryFailed(let path, let reason): "cannot prepare \(path) for PostgreSQL: \(reason)"
        case .notReplayed(let port, let target, let replayed, let receiver, let timeout):
            "the standby on port \(port) replayed its primary's write-ahead log to \(replayed), not to \(target), within \(timeout) (walreceiver: \(receiver))"
        }
    }

    public var description: String { message }
}
