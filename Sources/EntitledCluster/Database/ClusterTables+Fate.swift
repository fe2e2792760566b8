import NIOCore
import PostgresNIO

/// What a node asks to learn, for certain, whether a transaction whose COMMIT went unanswered committed.
///
/// Looking for its rows from another connection is not enough: the old backend may still be waiting for a
/// COMMIT that a stalled network, a pooler or a slow disk delivers later, and commit after the look. So
/// the old backend is ended first (`pg_terminate_backend`, waiting until it is gone), after which its
/// transaction can no longer change, and its fate is read from PostgreSQL's own record of it
/// (`pg_xact_status`).
extension ClusterTables {
    /// This connection's server process: its pid and start time (together they name it; a pid alone may
    /// be reused by a later process).
    func backend() async throws -> DatabaseBackend {
        let result = try await query(
            "SELECT pid, backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid()", "this connection's backend"
        )
        for row in result.rows {
            let (pid, started) = try row.decode((Int32, String).self)
            return DatabaseBackend(pid: pid, started: started)
        }
        throw ClusterError.database("pg_stat_activity does not show this connection's own backend")
    }

    /// Ends `backend` if it still runs, waiting up to `milliseconds` for it to be gone; returns whether it
    /// is gone (it may not be when the role may not signal it, or it does not end in time).
    func end(_ backend: DatabaseBackend, waitingUpTo milliseconds: Int) async throws -> Bool {
        _ = try await query(
            """
            SELECT pg_terminate_backend(pid, \(Int64(milliseconds))) FROM pg_stat_activity
            WHERE pid = \(backend.pid) AND backend_start::text = \(backend.started)
            """,
            "the end of the old connection's backend"
        )
        let result = try await query(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = \(backend.pid) AND backend_start::text = \(backend.started)",
            "whether the old backend is gone"
        )
        for row in result.rows { return try row.decode(Int64.self) == 0 }
        return false
    }

    /// PostgreSQL's record of transaction `xid` (as `pg_current_xact_id()` gave it).
    func status(ofTransaction xid: String) async throws -> TransactionStatus {
        let result = try await query("SELECT pg_xact_status(\(xid)::xid8)", "the transaction's status")
        for row in result.rows {
            switch try row.decode(String?.self) {
            case "committed": return .committed
            case "aborted": return .aborted
            case "in progress": return .inProgress
            default: return .forgotten
            }
        }
        return .forgotten
    }
}

/// A database connection's server process.
struct DatabaseBackend: Sendable, Hashable {
    var pid: Int32
    var started: String
}

/// What PostgreSQL knows of a transaction.
enum TransactionStatus: Sendable {
    case committed, aborted
    /// Its backend still runs it: it may yet commit.
    case inProgress
    /// Too old for PostgreSQL to say (its commit log was truncated).
    case forgotten
}
