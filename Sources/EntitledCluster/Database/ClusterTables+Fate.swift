import NIOCore
import PostgresNIO

/// What a node asks to learn, for certain, whether a group whose commit went unanswered committed.
///
/// Looking for its rows from another connection is not enough: the old backend may still be running the
/// call (its request delayed by a stalled network or a pooler, its commit by a slow disk) and commit after
/// the look. So the old backend is ended first (`pg_terminate_backend`, waiting until it is gone), after
/// which nothing it did can change any more; then the group's row says it all.
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

    /// The first change of the group `id`, if it committed (and its row is still kept).
    func firstChange(ofGroup id: Int64) async throws -> UInt64? {
        let result = try await query("SELECT first_seq FROM \(unescaped: schema).groups WHERE group_id = \(id)", "the group's row")
        for row in result.rows { return UInt64(try row.decode(Int64.self)) }
        return nil
    }
}

/// A database connection's server process.
struct DatabaseBackend: Sendable, Hashable {
    var pid: Int32
    var started: String
}
