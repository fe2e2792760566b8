import ArgumentParser
import Foundation

/// `entitled-bench restart`: how long a server killed with SIGKILL takes until it answers again, entitled
/// next to Redis, from a snapshot and from a snapshot plus a log, with the bulk load that filled them.
struct RestartCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restart",
        abstract: "Times restarts after kill -9 (until a check answers) and the bulk load before them, entitled next to redis-server.",
        discussion: "What is measured and how: Tools/entitled-bench/README.md."
    )

    @OptionGroup var common: CommonOptions
    @Option(name: .customLong("redis-server"), help: "The redis-server binary (a name is looked up on PATH).") var redisServer = "redis-server"
    @Option(help: "Users loaded into each server before its snapshot, each holding one membership.") var users = 1_000_000
    @Option(name: .customLong("log-grants"), help: "Grants made after the snapshot, which a restart replays from the log (Redis: its append-only file); 0 leaves that part out.")
    var logGrants = 1_000_000
    @Option(help: "Restarts timed of each kind and server; the report gives their median.") var runs = 3
    @Option(help: "Connections loading each server.") var connections = 8
    @Option(help: "Requests in flight per loading connection.") var pipeline = 256
    @Option(help: "Write the results as JSON to this file.") var json: String?

    func validate() throws {
        guard (1...50_000_000).contains(users) else { throw ValidationError("--users must be 1 to 50000000") }
        guard (0...50_000_000).contains(logGrants) else { throw ValidationError("--log-grants must be 0 to 50000000") }
        guard (1...20).contains(runs) else { throw ValidationError("--runs must be 1 to 20") }
        guard (1...256).contains(connections) else { throw ValidationError("--connections must be 1 to 256") }
        guard (1...100_000).contains(pipeline) else { throw ValidationError("--pipeline must be 1 to 100000") }
        guard !common.workDir.isEmpty else { throw ValidationError("--work-dir must not be empty") }
    }

    func run() throws {
        let (entitledPath, redisPath) = (try Executables.entitled(common.entitled), try Executables.redisServer(redisServer))
        let workRoot = try common.workRoot(prefix: "entitled-bench-restart")
        // Whole seconds, so that entitled's expiresAt and Redis's expires_at are the same instant.
        let expiresAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 30 * 86_400).rounded(.down))
        var report = RestartReport(
            startedAt: timestamp(), command: CommandLine.arguments, machine: MachineInfo.current(workDirectory: workRoot),
            users: users, logGrants: logGrants, runs: runs, redisVersion: Server.redisVersion(binary: redisPath)
        )
        // One server at a time: on 2 cores, the other's idle loop would still be noise.
        report.entitled = try measure(.entitled, binary: entitledPath, directory: workRoot + "/entitled", expiresAt: expiresAt)
        report.redis = try measure(.redis, binary: redisPath, directory: workRoot + "/redis", expiresAt: expiresAt)
        print(RestartReportTable.render(report))
        if let json { try writeJSON(report, to: json) }
    }

    /// Loads, snapshots and restarts one server: `runs` restarts from the snapshot, then (with log grants)
    /// the grants and `runs` restarts from the snapshot plus the log.
    private func measure(_ target: Target, binary: String, directory: String, expiresAt: Date) throws -> RestartMeasurements {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { cleanup.removeDirectory(directory) }
        let port = try TCPConnection.freePort()
        let restarts = Restarts(target: target, binary: binary, directory: directory, port: port)
        var measured = RestartMeasurements()

        progress("\(target.rawValue): starting on an empty directory")
        var server = try restarts.start(waitingFor: nil)
        defer { server.process.stop(signal: SIGKILL) }
        if target == .entitled { try server.definePro() }
        measured.load = try load(target, users: 0..<users, into: server, expiresAt: expiresAt)
        progress("\(target.rawValue): snapshot")
        (measured.snapshotSeconds, measured.snapshotBytes) = try target == .entitled ? entitledSnapshot(server) : redisSnapshot(server)

        let lastLoaded = String(format: "%012d", users - 1)
        for run in 1...runs {
            server.process.stop(signal: SIGKILL)
            server = try restarts.start(waitingFor: lastLoaded)
            measured.fromSnapshot.append(server.secondsToReady)
            progress("\(target.rawValue): restart \(run)/\(runs) from the snapshot answered after \(Format.fixed(server.secondsToReady, 2)) s")
        }
        guard logGrants > 0 else { return measured }
        measured.logLoad = try load(target, users: users..<(users + logGrants), into: server, expiresAt: expiresAt)
        let lastLogged = String(format: "%012d", users + logGrants - 1)
        for run in 1...runs {
            server.process.stop(signal: SIGKILL)
            server = try restarts.start(waitingFor: lastLogged)
            measured.fromSnapshotAndLog.append(server.secondsToReady)
            progress("\(target.rawValue): restart \(run)/\(runs) from the snapshot and log answered after \(Format.fixed(server.secondsToReady, 2)) s")
        }
        try verifyHolds(users + logGrants, target: target, server: server)
        return measured
    }

    /// Grants one membership to each of `users`, timed, with the server's CPU time over the load.
    private func load(_ target: Target, users: Range<Int>, into server: Server, expiresAt: Date) throws -> BulkLoad {
        progress("\(target.rawValue): loading \(Format.grouped(Double(users.count))) users (\(connections) connections, \(pipeline) in flight each)")
        let requests = MembershipRequests(target: target, expiresAt: expiresAt)
        let cpuBefore = CPUMeter.processSeconds(server.pid)
        let loaded = try PipelinedLoader.load(
            port: server.port, users: users, connections: connections, window: pipeline, writer: { requests.writer(seed: UInt64($0 + 1)) },
            accepts: requests.accepts
        )
        guard loaded.errors == 0 else { throw BenchError("\(target.rawValue) refused \(loaded.errors) memberships; the first answer: \(loaded.firstError ?? "?")") }
        let cpuAfter = CPUMeter.processSeconds(server.pid)
        let cpu = cpuBefore.flatMap { before in cpuAfter.map { $0 - before } }
        let result = BulkLoad(grants: users.count, seconds: loaded.seconds, serverCPUSeconds: cpu)
        progress("\(target.rawValue): \(Format.grouped(result.grantsPerSecond)) grants/s, server CPU \(result.serverCPUMicrosecondsPerGrant.map { Format.fixed($0, 2) } ?? "?") µs/grant")
        return result
    }

    /// `{"op":"snapshot"}`: its wall time and the file's size.
    private func entitledSnapshot(_ server: Server) throws -> (Double, Int?) {
        let started = monotonicNanoseconds()
        let answer = try TCPConnection(port: server.port, timeoutSeconds: 3600).call(#"{"op":"snapshot"}"#)
        guard answer.hasPrefix(#"{"ok":true"#) else { throw BenchError("entitled answered the snapshot with \(answer.prefix(300))") }
        let object = try? JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any]
        return (Double(monotonicNanoseconds() - started) / 1e9, (object?["bytes"] as? NSNumber)?.intValue)
    }

    /// `BGREWRITEAOF`, waited for: the append-only file's new base is an RDB file (`aof-use-rdb-preamble`,
    /// on by default), so a restart after it loads an RDB snapshot and then replays what was appended.
    /// A rewrite Redis started by itself while the load grew its file (`auto-aof-rewrite-percentage`) is
    /// waited for first: it does not hold the writes made after it began.
    private func redisSnapshot(_ server: Server) throws -> (Double, Int?) {
        try waitForRewrite(of: server)
        let started = monotonicNanoseconds()
        let answer = try TCPConnection(port: server.port).call("BGREWRITEAOF")
        guard answer.hasPrefix("+") else { throw BenchError("redis answered BGREWRITEAOF with \(answer.prefix(300))") }
        let info = try waitForRewrite(of: server)
        guard info["aof_last_bgrewrite_status"] == "ok" else { throw BenchError("redis's rewrite of its append-only file failed: \(info)") }
        return (Double(monotonicNanoseconds() - started) / 1e9, info["aof_base_size"].flatMap { Int($0) })
    }

    /// Waits until Redis rewrites no append-only file; returns its `INFO persistence` then.
    @discardableResult
    private func waitForRewrite(of server: Server) throws -> [String: String] {
        let deadline = monotonicNanoseconds() + nanoseconds(seconds: 3600)
        while monotonicNanoseconds() < deadline {
            let info = try server.redisInfo("persistence")
            if info["aof_rewrite_in_progress"] == "0", info["aof_rewrite_scheduled"] == "0" { return info }
            usleep(10_000)
        }
        throw BenchError("redis did not finish rewriting its append-only file within an hour")
    }

    /// After the last restart, the server holds every membership: entitled's recovery line counts them,
    /// Redis's DBSIZE does.
    private func verifyHolds(_ count: Int, target: Target, server: Server) throws {
        if target == .redis {
            let keys = try TCPConnection(port: server.port).call("DBSIZE").trimmingCharacters(in: .whitespacesAndNewlines)
            guard keys == ":\(count)" else { throw BenchError("redis holds \(keys) keys after its restart, not :\(count)") }
        } else if let memberships = server.recoveryLine()?.memberships, memberships != count {
            throw BenchError("entitled recovered \(memberships) memberships, not \(count)")
        }
    }
}
