import Foundation

/// Streaming replication between test servers, for the tests of a database that fails over: a standby
/// made from a running primary, its promotion, and waiting until it has replayed what the primary wrote.
extension PostgresServer {
    /// The settings a standby gets under the primary's and the caller's.
    static let standbyDefaultSettings: [String: String] = [
        // A cut replication link is tried again after 1 s, not 5: tests that heal a link wait less.
        "wal_retrieve_retry_interval": "1s"
    ]

    /// Makes a streaming standby of `primary` and starts it on a free port.
    ///
    /// Its data is a base backup of the running primary (`pg_basebackup -R -X stream`, as the server's
    /// user, connecting as the superuser to 127.0.0.1:`port`), so it is the same cluster: the same
    /// superuser password (`url(...)` and `psql` work on it as on the primary), the same roles and data. `-R`
    /// writes `standby.signal` and a `primary_conninfo` naming that same port, so the standby's walreceiver
    /// goes on connecting there: give the port of a `FaultProxy` in front of the primary to be able to cut the
    /// replication link. The primary authenticates TCP connections with scram-sha-256: the password is in a
    /// password file in the standby's directory, and `-R` writes that file's name into `primary_conninfo`
    /// (a password given in the connection string would be written there in clear).
    /// - Parameters:
    ///   - primary: a running server; a standby's settings such as `max_connections` may not be lower than
    ///     its primary's, so the standby starts with the primary's `settings`, then
    ///     `wal_retrieve_retry_interval=1s`, then `settings` over them. A standby ignores
    ///     `synchronous_standby_names`; once promoted it applies it.
    ///   - port: where the primary is reached: its own port, or a proxy's in front of it.
    ///   - settings: server options (`-c name=value`) for every start, over those above.
    /// - Throws: `commandFailed` when the base backup fails (its output says why), `startFailed`.
    public convenience init(standbyOf primary: PostgresServer, through port: Int, settings: [String: String] = [:]) throws {
        let merged = primary.settings.merging(Self.standbyDefaultSettings) { $1 }.merging(settings) { $1 }
        try self.init(superuserPassword: primary.superuserPassword, settings: merged, start: true) { standby in
            try standby.copyAsStandby(port: port)
        }
    }

    /// Fills the data directory with a base backup of the server on 127.0.0.1:`port`, set up as its standby.
    private func copyAsStandby(port: Int) throws {
        let passwordFile = directory + "/replication.pgpass"
        // hostname:port:database:username:password; `\` and `:` in a field are escaped with `\`.
        let escaped = superuserPassword.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ":", with: "\\:")
        try write("*:*:*:\(Self.superuser):\(escaped)\n", to: passwordFile)
        let connection = "host=127.0.0.1 port=\(port) user=\(Self.superuser) passfile=\(passwordFile)"
        let result = try installation.run(
            installation.pgBasebackup,
            // -X stream: the write-ahead log made during the copy comes along, so the copy is consistent.
            // -c fast: the backup's checkpoint at once, not spread over minutes. --no-sync: as initdb's
            // --no-sync, only a machine's crash, which no test makes, would lose anything.
            ["-D", dataDirectory, "-R", "-X", "stream", "-c", "fast", "--no-sync", "-d", connection],
            asServerUser: true, workingDirectory: directory
        )
        guard result.status == 0 else {
            throw PostgresServerError.commandFailed(command: "pg_basebackup", status: result.status, output: result.output)
        }
        try makeSocketDirectory()
    }

    /// Promotes a standby: `pg_ctl promote -w`, which returns once it is out of recovery and takes writes,
    /// on a new timeline. Its walreceiver stops; `primary_conninfo` stays but is no longer used.
    public func promote() throws {
        guard isRunning else { throw PostgresServerError.notRunning }
        let result = try installation.run(
            installation.pgCtl, ["-D", dataDirectory, "-w", "-t", "60", "promote"], asServerUser: true, workingDirectory: directory
        )
        guard result.status == 0 else {
            throw PostgresServerError.commandFailed(command: "pg_ctl promote", status: result.status, output: result.output + logTail())
        }
    }

    /// Whether the server is a standby still (`pg_is_in_recovery()`): true until it is promoted.
    public func isInRecovery() throws -> Bool {
        try psql("SELECT pg_is_in_recovery()") == "t"
    }

    /// The timeline the server writes on: 1 for a new cluster, one more at each promotion. Only on a server
    /// that takes writes (it reads the name of the current write-ahead log file, which a standby has not).
    public func timeline() throws -> Int {
        let name = try psql("SELECT substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)")
        guard let timeline = Int(name, radix: 16) else {
            throw PostgresServerError.psqlFailed(sql: "pg_walfile_name", status: 0, output: "not a timeline: \(name)")
        }
        return timeline
    }

    /// Waits until this standby has replayed everything `primary` had flushed to its write-ahead log when
    /// this was called (`pg_last_wal_replay_lsn()` here against `pg_current_wal_flush_lsn()` there): every
    /// transaction `primary` committed before is then visible here.
    /// - Throws: `notReplayed` when `timeout` passes first (a cut link, a stopped primary), saying how far
    ///   it got and what its walreceiver is doing.
    public func waitUntilReplayed(from primary: PostgresServer, timeout: Duration = .seconds(30)) throws {
        let target = try primary.psql("SELECT pg_current_wal_flush_lsn()")
        let deadline = ContinuousClock.now + timeout
        while true {
            if try psql("SELECT coalesce(pg_last_wal_replay_lsn() >= \(Self.literal(target))::pg_lsn, false)") == "t" { return }
            guard ContinuousClock.now < deadline else {
                let replayed = try psql("SELECT coalesce(pg_last_wal_replay_lsn()::text, 'nothing')")
                let receiver = try psql("SELECT status || ' from ' || sender_host || ':' || sender_port FROM pg_stat_wal_receiver")
                throw PostgresServerError.notReplayed(
                    port: port, target: target, replayed: replayed, receiver: receiver.isEmpty ? "no walreceiver running" : receiver,
                    timeout: timeout
                )
            }
            usleep(20_000)
        }
    }
}
