import Foundation

/// Faults short of a stop or a kill, for the tests of what a node does when its database misbehaves.
extension PostgresServer {
    /// Ends the sessions of `database` (every database when nil), of `user` when given, as an operator's
    /// `pg_terminate_backend` or a failover does: their clients see the connection drop, and
    /// LISTEN registrations with it. Returns how many were ended. The server keeps running.
    @discardableResult
    public func terminateConnections(database: String? = nil, user: String? = nil) throws -> Int {
        var conditions = ["pid <> pg_backend_pid()", "backend_type = 'client backend'"]
        if let database { conditions.append("datname = \(Self.literal(database))") }
        if let user { conditions.append("usename = \(Self.literal(user))") }
        let output = try psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE \(conditions.joined(separator: " AND "))")
        return Int(output) ?? 0
    }

    /// Stops the postmaster and every backend with SIGSTOP: connections stay open and connects are
    /// accepted by the kernel, but nothing answers, as with a database host that hangs or a network
    /// that drops packets. `resume()` undoes it; `close()` resumes before stopping.
    public func pause() {
        guard let pid = postmasterPID() else { return }
        _ = Glibc.kill(-pid, SIGSTOP)
        state.withLock { $0.isPaused = true }
    }

    /// Lets a paused server run again (SIGCONT).
    public func resume() {
        guard let pid = postmasterPID() else { return }
        _ = Glibc.kill(-pid, SIGCONT)
        state.withLock { $0.isPaused = false }
    }
}
