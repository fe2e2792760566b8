import ArgumentParser
import Foundation

/// `entitled-bench memory`: resident memory per user holding one membership, entitled next to Redis.
struct MemoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory",
        abstract: "Measures the resident memory per user holding one membership, in entitled and in redis-server.",
        discussion: "What is measured and how: Tools/entitled-bench/README.md."
    )

    @OptionGroup var common: CommonOptions
    @Option(name: .customLong("entitled-option"), parsing: .unconditionalSingleValue, help: "An extra option for entitled (--entitled-option=--event-loops=1); repeatable.")
    var entitledOptions: [String] = []
    @Option(name: .customLong("redis-server"), help: "The redis-server binary (a name is looked up on PATH).") var redisServer = "redis-server"
    @Option(help: "Users loaded into each server, each holding one membership.") var users = 1_000_000
    @Option(help: "Connections loading each server.") var connections = 8
    @Option(help: "Requests in flight per loading connection.") var pipeline = 256
    @Option(help: "Durability of both servers' writes while loading: always, everysec or no (entitled --fsync, Redis appendfsync).") var fsync = "no"
    @Option(help: "Write the results as JSON to this file.") var json: String?

    func validate() throws {
        guard (1...50_000_000).contains(users) else { throw ValidationError("--users must be 1 to 50000000") }
        guard (1...256).contains(connections) else { throw ValidationError("--connections must be 1 to 256") }
        guard (1...100_000).contains(pipeline) else { throw ValidationError("--pipeline must be 1 to 100000") }
        guard ["always", "everysec", "no"].contains(fsync) else { throw ValidationError("--fsync must be always, everysec or no") }
        guard !common.workDir.isEmpty else { throw ValidationError("--work-dir must not be empty") }
    }

    func run() throws {
        let report = try measure()
        print(MemoryReportTable.render(report))
        if let json { try writeJSON(report, to: json) }
    }

    /// Starts both servers, reads their resident memory, loads one membership per user into each, reads it again.
    private func measure() throws -> MemoryReport {
        let (entitledPath, redisPath) = (try Executables.entitled(common.entitled), try Executables.redisServer(redisServer))
        let workRoot = try common.workRoot(prefix: "entitled-bench-memory")
        // Whole seconds, so that entitled's expiresAt and Redis's expires_at are the same instant.
        let expiresAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 30 * 86_400).rounded(.down))
        let settings = MemorySettings(
            users: users, connections: connections, pipeline: pipeline, fsync: fsync, expiresAt: ISO8601DateFormatter().string(from: expiresAt),
            entitledBinary: entitledPath, entitledOptions: entitledOptions, redisServer: redisPath, redisVersion: Server.redisVersion(binary: redisPath)
        )
        progress("starting entitled (--fsync \(fsync)) and redis-server (appendfsync \(fsync))")
        let entitled = try Server.entitled(entitledPath, dataDirectory: workRoot + "/entitled", fsync: fsync, options: entitledOptions)
        defer { entitled.process.stop() }
        let redis = try Server.redis(redisPath, directory: workRoot + "/redis", appendfsync: fsync)
        defer { redis.process.stop() }
        try entitled.definePro()
        sleep(seconds: 1)
        let servers = [entitled, redis]
        let before = try servers.map { try Self.resident(of: $0.process) }
        progress("resident before loading: entitled \(Format.mebibytes(before[0])), redis \(Format.mebibytes(before[1]))")

        var loadSeconds: [Double] = []
        for server in servers {
            let target = server.target
            progress("loading \(Format.grouped(Double(users))) users into \(target.rawValue) (\(connections) connections, \(pipeline) in flight each)")
            let requests = MembershipRequests(target: target, expiresAt: expiresAt)
            let loaded = try PipelinedLoader.load(
                port: server.port, users: 0..<users, connections: connections, window: pipeline, writer: { requests.writer(seed: UInt64($0 + 1)) },
                accepts: requests.accepts
            )
            guard loaded.errors == 0 else { throw BenchError("\(target.rawValue) refused \(loaded.errors) memberships; the first answer: \(loaded.firstError ?? "?")") }
            loadSeconds.append(loaded.seconds)
            progress("loaded \(target.rawValue) in \(Format.fixed(loaded.seconds, 2)) s (\(Format.grouped(Double(users) / max(loaded.seconds, 1e-9))) users/s)")
        }
        try verify(entitled: entitled, redisPort: redis.port)

        progress("waiting 1 s before reading the resident memory")
        sleep(seconds: 1)
        let after = try servers.map { try Self.resident(of: $0.process) }
        let info = try redis.redisInfoMemory()
        progress("resident after loading: entitled \(Format.mebibytes(after[0])), redis \(Format.mebibytes(after[1]))")
        let memory = servers.indices.map { index in
            ServerMemory(
                residentBytesBefore: before[index], residentBytesAfter: after[index], peakResidentBytes: servers[index].process.residentBytes(field: "VmHWM"),
                loadSeconds: loadSeconds[index], users: Double(users)
            )
        }
        let usedMemory = info["used_memory"].flatMap { Int($0) }
        let kept = [
            "used_memory", "used_memory_rss", "used_memory_peak", "used_memory_dataset", "used_memory_startup", "mem_fragmentation_ratio",
            "mem_allocator", "allocator_allocated", "allocator_resident",
        ]
        var report = MemoryReport(
            startedAt: timestamp(), command: CommandLine.arguments, machine: MachineInfo.current(workDirectory: workRoot),
            settings: settings, entitled: memory[0], redis: memory[1], redisUsedMemoryBytes: usedMemory, redisUsedMemoryBytesPerUser: usedMemory.map { Double($0) / Double(users) },
            redisMemoryInfo: info.filter { kept.contains($0.key) }
        )
        report.judge()
        return report
    }

    /// The load reached both stores: the first and the last user have access to `pro` in entitled, and Redis
    /// holds exactly one hash per user.
    private func verify(entitled: Server, redisPort: UInt16) throws {
        if let denied = try entitled.denied(Set([0, users - 1]).map { String(format: "%012d", $0) }).first {
            throw BenchError("entitled does not give access after the load: \(denied)")
        }
        let keys = try TCPConnection(port: redisPort).call("DBSIZE").trimmingCharacters(in: .whitespacesAndNewlines)
        guard keys == ":\(users)" else { throw BenchError("redis holds \(keys) keys after the load, not :\(users)") }
    }

    /// VmRSS of `process`, or an error when it cannot be read (no /proc, or the process is gone).
    private static func resident(of process: ChildProcess) throws -> Int {
        guard let bytes = process.residentBytes() else {
            throw BenchError("cannot read the resident memory of \(process.name) (pid \(process.pid)) from /proc/\(process.pid)/status")
        }
        return bytes
    }
}
