import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `entitled-bench memory`: starts both servers, reads their resident memory, loads one membership per
/// user into each, reads it again.
struct MemoryBenchmark {
    let options: MemoryCommand

    func run() throws -> MemoryReport {
        let (entitledPath, redisPath) = try Executables.servers(entitled: options.entitled, redisServer: options.redisServer)
        let workRoot = try cleanup.makeTemporaryDirectory(
            in: options.workDir.hasSuffix("/") ? String(options.workDir.dropLast()) : options.workDir, prefix: "entitled-bench-memory"
        )
        // Whole seconds, so entitled's expiresAt and Redis's expires_at are the same instant.
        let expiresAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 30 * 86_400).rounded(.down))
        let settings = MemorySettings(
            users: options.users, connections: options.connections, pipeline: options.pipeline, fsync: options.fsync,
            expiresAt: ISO8601DateFormatter().string(from: expiresAt), entitledBinary: entitledPath,
            entitledOptions: options.entitledOptions, redisServer: redisPath, redisVersion: RedisProcess.version(binary: redisPath)
        )

        let entitledDirectory = workRoot + "/entitled"
        let redisDirectory = workRoot + "/redis"
        try FileManager.default.createDirectory(atPath: redisDirectory, withIntermediateDirectories: true)
        progress("starting entitled (--fsync \(options.fsync)) and redis-server (appendfsync \(options.fsync))")
        let entitled = try EntitledProcess.start(
            binary: entitledPath, dataDirectory: entitledDirectory, fsync: options.fsync, extraArguments: options.entitledOptions
        )
        defer { entitled.process.stop() }
        let redis = try RedisProcess.start(binary: redisPath, directory: redisDirectory, appendfsync: options.fsync)
        defer { redis.process.stop() }

        try EntitledProcess.defineProEntitlement(port: entitled.port)
        sleep(seconds: 1)
        let entitledBefore = try Self.resident(of: entitled.process)
        let redisBefore = try Self.resident(of: redis.process)
        progress(
            "resident before loading: entitled \(ReportTable.mebibytes(entitledBefore)), redis \(ReportTable.mebibytes(redisBefore))"
        )

        var loadSeconds: [Target: Double] = [:]
        for (target, port) in [(Target.entitled, entitled.port), (.redis, redis.port)] {
            progress(
                "loading \(ReportTable.grouped(Double(options.users))) users into \(target.rawValue) "
                    + "(\(options.connections) connections, \(options.pipeline) in flight each)"
            )
            let seconds = try MembershipLoader.load(
                port: port, target: target, users: options.users, connections: options.connections,
                pipeline: options.pipeline, expiresAt: expiresAt
            )
            loadSeconds[target] = seconds
            progress(
                "loaded \(target.rawValue) in \(ReportTable.format(seconds, 2)) s "
                    + "(\(ReportTable.grouped(Double(options.users) / max(seconds, 1e-9))) users/s)"
            )
        }
        try verifyEntitled(port: entitled.port)
        try verifyRedis(port: redis.port)

        progress("waiting 1 s before reading the resident memory")
        sleep(seconds: 1)
        let entitledAfter = try Self.resident(of: entitled.process)
        let redisAfter = try Self.resident(of: redis.process)
        let info = try Self.redisInfoMemory(port: redis.port)
        progress(
            "resident after loading: entitled \(ReportTable.mebibytes(entitledAfter)), redis \(ReportTable.mebibytes(redisAfter))"
        )

        let users = Double(options.users)
        let entitledMemory = ServerMemory(
            residentBytesBefore: entitledBefore, residentBytesAfter: entitledAfter,
            peakResidentBytes: Self.procStatusBytes(pid: entitled.process.pid, field: "VmHWM"),
            loadSeconds: loadSeconds[.entitled] ?? 0, users: users
        )
        let redisMemory = ServerMemory(
            residentBytesBefore: redisBefore, residentBytesAfter: redisAfter,
            peakResidentBytes: Self.procStatusBytes(pid: redis.process.pid, field: "VmHWM"),
            loadSeconds: loadSeconds[.redis] ?? 0, users: users
        )
        let usedMemory = info["used_memory"].flatMap { Int($0) }
        let kept = ["used_memory", "used_memory_rss", "used_memory_peak", "used_memory_dataset", "used_memory_startup",
                    "mem_fragmentation_ratio", "mem_allocator", "allocator_allocated", "allocator_resident"]
        return MemoryReport(
            startedAt: ISO8601DateFormatter().string(from: Date()), command: CommandLine.arguments,
            machine: MachineInfo.current(workDirectory: workRoot), settings: settings,
            entitled: entitledMemory, redis: redisMemory,
            redisUsedMemoryBytes: usedMemory,
            redisUsedMemoryBytesPerUser: usedMemory.map { Double($0) / users },
            redisMemoryInfo: info.filter { kept.contains($0.key) }
        )
    }

    /// The first and the last user have access to `pro`: the load reached the store.
    private func verifyEntitled(port: UInt16) throws {
        let connection = try TCPConnection(port: port)
        let reader = LineReader(connection)
        for user in Set([0, options.users - 1]) {
            var line = Array(#"{"op":"check","user":""#.utf8)
            LoadRequests.appendDigits(user, to: &line)
            line += Array(#"","entitlement":"pro"}"#.utf8)
            let answer = try connection.call(String(decoding: line, as: UTF8.self), reader: reader)
            guard answer.hasPrefix(#"{"ok":true,"active":true"#) else {
                throw BenchError("entitled does not give user \(user) access after the load: \(answer)")
            }
        }
    }

    /// Redis holds exactly one hash per user.
    private func verifyRedis(port: UInt16) throws {
        let connection = try TCPConnection(port: port)
        let answer = try connection.call("DBSIZE", reader: LineReader(connection))
        guard answer.trimmingCharacters(in: .whitespacesAndNewlines) == ":\(options.users)" else {
            throw BenchError("redis holds \(answer.trimmingCharacters(in: .whitespacesAndNewlines)) keys after the load, not :\(options.users)")
        }
    }

    /// VmRSS of `process`, or an error when it cannot be read (no /proc, or the process is gone).
    private static func resident(of process: ChildProcess) throws -> Int {
        guard let bytes = process.residentBytes() else {
            throw BenchError("cannot read the resident memory of \(process.name) (pid \(process.pid)) from /proc/\(process.pid)/status")
        }
        return bytes
    }

    /// A `kB` field of /proc/PID/status (such as VmHWM, the peak resident memory) in bytes.
    static func procStatusBytes(pid: pid_t, field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
        }
        return nil
    }

    /// Redis's `INFO memory`, as its `name:value` fields.
    static func redisInfoMemory(port: UInt16) throws -> [String: String] {
        let connection = try TCPConnection(port: port, timeoutSeconds: 10)
        let reader = LineReader(connection)
        // A bulk string: `$LENGTH\r\n`, then LENGTH bytes of `name:value\r\n` lines and `# Section\r\n` headers.
        let header = try connection.call("INFO memory", reader: reader).trimmingCharacters(in: .whitespacesAndNewlines)
        guard header.hasPrefix("$"), let length = Int(header.dropFirst()) else {
            throw BenchError("redis answered INFO memory with \(header.prefix(200))")
        }
        var fields: [String: String] = [:]
        var consumed = 0
        while consumed < length {
            let line = try reader.readLine()
            consumed += line.count + 1
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.hasPrefix("#"), let colon = text.firstIndex(of: ":") else { continue }
            fields[String(text[..<colon])] = String(text[text.index(after: colon)...])
        }
        return fields
    }
}

/// Everything `entitled-bench memory` measured, for the table and the JSON file.
struct MemoryReport: Codable {
    var tool = "entitled-bench memory"
    var startedAt: String
    var command: [String]
    var machine: MachineInfo
    var settings: MemorySettings
    var entitled: ServerMemory
    var redis: ServerMemory
    /// Redis's own count of the bytes it allocated (`INFO memory` used_memory), after the load.
    var redisUsedMemoryBytes: Int?
    var redisUsedMemoryBytesPerUser: Double?
    /// A few fields of Redis's `INFO memory` after the load.
    var redisMemoryInfo: [String: String]

    /// What the goal compares: entitled's growth per user over Redis's.
    var growthRatio: Double
    /// The same for the whole resident memory after the load.
    var residentRatio: Double
    /// The goal (issue 22): entitled needs at most `goalRatio` of Redis's memory per user ((after − before)
    /// / users).
    var goalMet: Bool

    static let goalRatio = 0.8

    init(
        startedAt: String, command: [String], machine: MachineInfo, settings: MemorySettings, entitled: ServerMemory,
        redis: ServerMemory, redisUsedMemoryBytes: Int?, redisUsedMemoryBytesPerUser: Double?,
        redisMemoryInfo: [String: String]
    ) {
        self.startedAt = startedAt
        self.command = command
        self.machine = machine
        self.settings = settings
        self.entitled = entitled
        self.redis = redis
        self.redisUsedMemoryBytes = redisUsedMemoryBytes
        self.redisUsedMemoryBytesPerUser = redisUsedMemoryBytesPerUser
        self.redisMemoryInfo = redisMemoryInfo
        growthRatio = redis.growthBytesPerUser > 0 ? entitled.growthBytesPerUser / redis.growthBytesPerUser : 0
        residentRatio = redis.residentBytesPerUser > 0 ? entitled.residentBytesPerUser / redis.residentBytesPerUser : 0
        goalMet = entitled.growthBytesPerUser <= Self.goalRatio * redis.growthBytesPerUser
    }
}

struct MemorySettings: Codable {
    var users: Int
    var connections: Int
    var pipeline: Int
    var fsync: String
    /// The expiry of every membership (entitled's expiresAt; Redis's expires_at holds the same instant).
    var expiresAt: String
    var entitledBinary: String
    var entitledOptions: [String]
    var redisServer: String
    var redisVersion: String
}

/// One server's resident memory (VmRSS) before and after the load.
struct ServerMemory: Codable {
    var residentBytesBefore: Int
    var residentBytesAfter: Int
    /// VmHWM after the load: the most it was resident at any moment.
    var peakResidentBytes: Int?
    var loadSeconds: Double
    /// (after − before) / users: what one more user holding one membership costs. The figure the goal uses.
    var growthBytesPerUser: Double
    /// after / users: the whole process, its empty size included.
    var residentBytesPerUser: Double

    init(residentBytesBefore: Int, residentBytesAfter: Int, peakResidentBytes: Int?, loadSeconds: Double, users: Double) {
        self.residentBytesBefore = residentBytesBefore
        self.residentBytesAfter = residentBytesAfter
        self.peakResidentBytes = peakResidentBytes
        self.loadSeconds = loadSeconds
        growthBytesPerUser = Double(residentBytesAfter - residentBytesBefore) / users
        residentBytesPerUser = Double(residentBytesAfter) / users
    }
}

/// The table `entitled-bench memory` prints.
enum MemoryReportTable {
    static func render(_ report: MemoryReport) -> String {
        let settings = report.settings
        let machine = report.machine
        var lines = [
            "entitled-bench memory  \(report.startedAt)",
            "machine: \(machine.cpus) cores, \(machine.memoryGiB) GiB, \(machine.kernel); \(settings.redisVersion)",
            "load: \(ReportTable.grouped(Double(settings.users))) users, one membership each (entitled: grant of prod_pro, "
                + "source app_store, expiresAt; redis: HSET m:<user> with id, product, user, source, created_at, expires_at); "
                + "fsync \(settings.fsync); \(settings.connections) connections × \(settings.pipeline) in flight",
            "",
        ]
        let header = ["server", "users", "RSS before", "RSS after", "(after−before)/user", "after/user", "peak RSS", "load"]
        var rows = [header]
        for (name, memory) in [("entitled", report.entitled), ("redis", report.redis)] {
            rows.append([
                name, ReportTable.grouped(Double(settings.users)), ReportTable.mebibytes(memory.residentBytesBefore),
                ReportTable.mebibytes(memory.residentBytesAfter), bytes(memory.growthBytesPerUser),
                bytes(memory.residentBytesPerUser), ReportTable.mebibytes(memory.peakResidentBytes),
                "\(ReportTable.format(memory.loadSeconds, 2)) s",
            ])
        }
        rows.append([
            "entitled / redis", "", "", "", ReportTable.format(report.growthRatio, 2) + "×",
            ReportTable.format(report.residentRatio, 2) + "×", "", "",
        ])
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            lines.append(
                row.enumerated().map { column, cell in
                    let padding = String(repeating: " ", count: widths[column] - cell.count)
                    return column == 0 ? cell + padding : padding + cell
                }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
            )
        }
        lines.append("")
        if let used = report.redisUsedMemoryBytes, let perUser = report.redisUsedMemoryBytesPerUser {
            lines.append(
                "redis used_memory (INFO memory): \(ReportTable.mebibytes(used)) = \(bytes(perUser)) per user "
                    + "(allocator \(report.redisMemoryInfo["mem_allocator"] ?? "?"))"
            )
        }
        let verdict = report.goalMet ? "met" : "MISSED"
        lines.append(
            "goal: entitled's (after−before)/user ≤ \(ReportTable.format(MemoryReport.goalRatio, 1))× Redis's: \(bytes(report.entitled.growthBytesPerUser)) vs "
                + "\(bytes(report.redis.growthBytesPerUser)) (\(ReportTable.format(report.growthRatio, 2))×): \(verdict)"
        )
        return lines.joined(separator: "\n")
    }

    private static func bytes(_ value: Double) -> String {
        "\(ReportTable.format(value, 1)) B"
    }
}
