import ArgumentParser
import Foundation

/// `entitled-bench memory`: resident memory per user holding one membership, entitled next to Redis.
struct MemoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory",
        abstract: "Measures the resident memory per user holding one membership, in entitled and in redis-server.",
        discussion: """
            Starts entitled and redis-server on 127.0.0.1, reads each one's resident memory (VmRSS), gives --users \
            users one membership each, pipelined over --connections connections with every answer checked, waits \
            1 s and reads it again. entitled gets a grant of prod_pro per user (source app_store, expiresAt 30 days \
            ahead); Redis one hash per user with the same fields (HSET m:<user> id product user source created_at \
            expires_at). The figure the goal compares (at most 0.8× Redis) is (after − before)/users: what a user \
            costs, without the empty process.
            """
    )

    @OptionGroup var common: CommonOptions
    @Option(
        name: .customLong("entitled-option"), parsing: .unconditionalSingleValue,
        help: "An extra option for entitled, e.g. --entitled-option=--event-loops=1; repeat for several."
    )
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
        cleanup.installSignalHandlers()
        defer { cleanup.runAll() }
        let report = try measure()
        print(MemoryReportTable.render(report))
        if let json { try writeJSON(report, to: json) }
    }

    /// Starts both servers, reads their resident memory, loads one membership per user into each, reads it again.
    private func measure() throws -> MemoryReport {
        let (entitledPath, redisPath) = try Executables.servers(entitled: common.entitled, redisServer: redisServer)
        let workRoot = try common.workRoot(prefix: "entitled-bench-memory")
        // Whole seconds, so that entitled's expiresAt and Redis's expires_at are the same instant.
        let expiresAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 30 * 86_400).rounded(.down))
        let settings = MemorySettings(
            users: users, connections: connections, pipeline: pipeline, fsync: fsync, expiresAt: ISO8601DateFormatter().string(from: expiresAt),
            entitledBinary: entitledPath, entitledOptions: entitledOptions, redisServer: redisPath, redisVersion: RedisProcess.version(binary: redisPath)
        )
        try FileManager.default.createDirectory(atPath: workRoot + "/redis", withIntermediateDirectories: true)
        progress("starting entitled (--fsync \(fsync)) and redis-server (appendfsync \(fsync))")
        let entitled = try EntitledProcess.start(binary: entitledPath, dataDirectory: workRoot + "/entitled", fsync: fsync, extraArguments: entitledOptions)
        defer { entitled.process.stop() }
        let redis = try RedisProcess.start(binary: redisPath, directory: workRoot + "/redis", appendfsync: fsync)
        defer { redis.process.stop() }
        try EntitledProcess.defineProEntitlement(port: entitled.port)
        sleep(seconds: 1)
        let before = (entitled: try Self.resident(of: entitled.process), redis: try Self.resident(of: redis.process))
        progress("resident before loading: entitled \(Format.mebibytes(before.entitled)), redis \(Format.mebibytes(before.redis))")

        var loadSeconds: [Target: Double] = [:]
        for (target, port) in [(Target.entitled, entitled.port), (.redis, redis.port)] {
            progress("loading \(Format.grouped(Double(users))) users into \(target.rawValue) (\(connections) connections, \(pipeline) in flight each)")
            let requests = MembershipRequests(target: target, expiresAt: expiresAt)
            let loaded = try PipelinedLoader.load(
                port: port, users: 0..<users, connections: connections, window: pipeline, writer: { requests.writer(seed: UInt64($0 + 1)) },
                accepts: requests.accepts
            )
            guard loaded.errors == 0 else { throw BenchError("\(target.rawValue) refused \(loaded.errors) memberships; the first answer: \(loaded.firstError ?? "?")") }
            loadSeconds[target] = loaded.seconds
            progress("loaded \(target.rawValue) in \(Format.fixed(loaded.seconds, 2)) s (\(Format.grouped(Double(users) / max(loaded.seconds, 1e-9))) users/s)")
        }
        try verify(entitledPort: entitled.port, redisPort: redis.port)

        progress("waiting 1 s before reading the resident memory")
        sleep(seconds: 1)
        let after = (entitled: try Self.resident(of: entitled.process), redis: try Self.resident(of: redis.process))
        let info = try RedisProcess.infoMemory(port: redis.port)
        progress("resident after loading: entitled \(Format.mebibytes(after.entitled)), redis \(Format.mebibytes(after.redis))")
        let usedMemory = info["used_memory"].flatMap { Int($0) }
        let kept = [
            "used_memory", "used_memory_rss", "used_memory_peak", "used_memory_dataset", "used_memory_startup", "mem_fragmentation_ratio",
            "mem_allocator", "allocator_allocated", "allocator_resident",
        ]
        var report = MemoryReport(
            startedAt: ISO8601DateFormatter().string(from: Date()), command: CommandLine.arguments, machine: MachineInfo.current(workDirectory: workRoot),
            settings: settings,
            entitled: ServerMemory(
                residentBytesBefore: before.entitled, residentBytesAfter: after.entitled, peakResidentBytes: entitled.process.residentBytes(field: "VmHWM"),
                loadSeconds: loadSeconds[.entitled] ?? 0, users: Double(users)
            ),
            redis: ServerMemory(
                residentBytesBefore: before.redis, residentBytesAfter: after.redis, peakResidentBytes: redis.process.residentBytes(field: "VmHWM"),
                loadSeconds: loadSeconds[.redis] ?? 0, users: Double(users)
            ),
            redisUsedMemoryBytes: usedMemory, redisUsedMemoryBytesPerUser: usedMemory.map { Double($0) / Double(users) },
            redisMemoryInfo: info.filter { kept.contains($0.key) }
        )
        report.judge()
        return report
    }

    /// The load reached both stores: the first and the last user have access to `pro` in entitled, and Redis
    /// holds exactly one hash per user.
    private func verify(entitledPort: UInt16, redisPort: UInt16) throws {
        let connection = try TCPConnection(port: entitledPort)
        let reader = LineReader(connection)
        for user in Set([0, users - 1]) {
            var line: [UInt8] = []
            LoadRequests(target: .entitled).append(.check, user: user, to: &line)
            let answer = try connection.call(String(decoding: line.dropLast(), as: UTF8.self), reader: reader)
            guard answer.hasPrefix(#"{"ok":true,"active":true"#) else { throw BenchError("entitled does not give user \(user) access after the load: \(answer)") }
        }
        let redis = try TCPConnection(port: redisPort)
        let keys = try redis.call("DBSIZE", reader: LineReader(redis)).trimmingCharacters(in: .whitespacesAndNewlines)
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
