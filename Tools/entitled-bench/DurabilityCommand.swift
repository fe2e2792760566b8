import ArgumentParser
import Foundation

/// `entitled-bench durability`: durable writes next to Redis, snapshot and recovery times at scale.
struct DurabilityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "durability",
        abstract: "Measures entitled's durable write rate next to Redis, and its snapshot and recovery times at scale.",
        discussion: """
            1. Durable writes: entitled --fsync always (a grant of a new user per request) against redis-server \
            --appendfsync always (SADD), a fresh server per run, at each --connections count, one request in flight \
            per connection, driven by entitled-loadgen; medians of --runs runs, with each server's CPU per write. \
            --validate adds redis-benchmark's SADD, --ceiling both servers with no sync at all.

            2. Snapshot and recovery: entitled --fsync no gets --memberships grants; a snapshot; check latency \
            without a snapshot and while a second one is written; a graceful stop, a restart, --log-grants more \
            grants, kill -9, and --runs timed restarts (launch to ready line: the snapshot plus the log).
            """
    )

    @OptionGroup var common: CommonOptions
    @Option(name: .customLong("redis-server"), help: "The redis-server binary (a name is looked up on PATH). Without it the Redis half is skipped.")
    var redisServer = "redis-server"
    @Option(help: "The entitled-loadgen binary (default: entitled-loadgen next to this executable).") var loadgen: String?
    @Option(help: "Seconds each write measurement runs (after the warm-up).") var duration = 5.0
    @Option(help: "Seconds of warm-up before each write measurement (sent, not counted).") var warmup = 0.5
    @Option(help: "How many times each write measurement, and the recovery, is repeated (the median is reported).") var runs = 3
    @Option(name: .customLong("connections"), help: "Concurrent connections of a write measurement; repeat the option for several (default: 1 and 50).")
    var connections: [Int] = []
    @Option(help: "Memberships loaded before the snapshot.") var memberships = 1_000_000
    @Option(name: .customLong("log-grants"), help: "Grants after the snapshot, for recovery to replay from the log.") var logGrants = 5000
    @Option(name: .customLong("check-connections"), help: "Connections running checks during and without a snapshot.") var checkConnections = 4
    @Option(name: .customLong("load-connections"), help: "Connections loading the memberships.") var loadConnections = 4
    @Option(name: .customLong("load-window"), help: "Request lines in flight per loading connection.") var loadWindow = 1000
    @Option(
        help: "At most this many seconds to wait, before each timed step, until other processes use under 0.25 cores (0: never wait). The CPU they used is reported either way."
    )
    var settle = 30.0
    @Option(help: "Also write the full results, every run included, as JSON to this file.") var json: String?
    @Flag(
        name: .customLong("validate"),
        help: "Also measure redis-benchmark's SADD, same connections, on a fresh Redis in each run: the load generator must drive Redis at least as fast."
    )
    var compareWithRedisBenchmark = false
    @Flag(
        help: """
            Also measure both servers with no sync at all (entitled --fsync no, Redis appendfsync no) in each run: \
            entitled's unsynced rate over Redis's durable one is the most any way of syncing could reach on this machine.
            """
    )
    var ceiling = false
    @Flag(name: .customLong("skip-writes"), help: "Skip part 1 (durable writes).") var skipWrites = false
    @Flag(name: .customLong("skip-snapshot"), help: "Skip part 2 (snapshot and recovery).") var skipSnapshot = false

    func validate() throws {
        guard duration > 0 && duration <= 600 else { throw ValidationError("--duration must be above 0 and at most 600 seconds") }
        guard warmup >= 0 && warmup <= 60 else { throw ValidationError("--warmup must be 0 to 60 seconds") }
        guard (1...50).contains(runs) else { throw ValidationError("--runs must be 1 to 50") }
        guard connections.allSatisfy({ (1...1000).contains($0) }) else { throw ValidationError("--connections must be 1 to 1000") }
        guard (1...50_000_000).contains(memberships) else { throw ValidationError("--memberships must be 1 to 50000000") }
        guard (0...10_000_000).contains(logGrants) else { throw ValidationError("--log-grants must be 0 to 10000000") }
        guard (1...256).contains(checkConnections) else { throw ValidationError("--check-connections must be 1 to 256") }
        guard (1...64).contains(loadConnections) else { throw ValidationError("--load-connections must be 1 to 64") }
        guard (1...100_000).contains(loadWindow) else { throw ValidationError("--load-window must be 1 to 100000") }
        guard settle >= 0 && settle <= 600 else { throw ValidationError("--settle must be 0 to 600 seconds") }
    }

    func run() throws {
        cleanup.installSignalHandlers()
        defer { cleanup.runAll() }
        let entitledPath = try Executables.entitled(common.entitled)
        let redisPath = Executables.find(redisServer)
        let redisSkipped = redisPath == nil ? "no \(redisServer) found (install it: apt-get install -y redis-server, or pass --redis-server PATH)" : nil
        if let redisSkipped { printError("entitled-bench durability: \(redisSkipped); the Redis half is skipped") }
        let workRoot = try common.workRoot(prefix: "entitled-bench-durability")
        let counts = connections.isEmpty ? [1, 50] : connections
        let machine = MachineInfo.current(workDirectory: workRoot)
        if machine.workFileSystem.hasPrefix("tmpfs") {
            printError("entitled-bench durability: warning: \(workRoot) is on tmpfs, where fsync costs nothing; use --work-dir on a real disk")
        }
        var report = DurabilityReport(
            startedAt: Self.timestamp(), command: CommandLine.arguments, machine: machine,
            settings: DurabilitySettings(
                durationSeconds: duration, warmupSeconds: warmup, runs: runs, connections: counts, memberships: memberships, logGrants: logGrants,
                checkConnections: checkConnections, loadConnections: loadConnections, loadWindow: loadWindow, settleSeconds: settle,
                entitledBinary: entitledPath, redisServer: redisPath, redisVersion: redisPath.map { RedisProcess.version(binary: $0) },
                workDirectory: workRoot
            )
        )
        if !skipWrites {
            report.writes = measureWrites(
                connections: counts, entitled: entitledPath, redis: redisPath, redisSkipped: redisSkipped, workRoot: workRoot,
                neutral: NeutralLoad(binary: try Executables.loadGenerator(loadgen), directory: workRoot)
            )
        }
        if !skipSnapshot { report.snapshot = measureSnapshot(entitled: entitledPath, workRoot: workRoot) }
        report.finishedAt = Self.timestamp()
        report.goals = Self.goals(of: report)
        print(DurabilityReportTable.render(report))
        if let json {
            try writeJSON(report, to: json)
        } else {
            print("\n(no --json PATH given: only this table was kept)")
        }
    }

    /// The goals, judged on this run's numbers.
    static func goals(of report: DurabilityReport) -> [Goal] {
        let x = { (ratio: Double) in Format.fixed(ratio, 2) + "×" }
        var goals: [Goal] = []
        if let writes = report.writes, let most = report.settings.connections.max() {
            let ratio = writes.ratios.first { $0.connections == most }
            // With --ceiling, what no sync at all would give, so that a reader sees how much room is left.
            let ceiling = writes.ceilings.first { $0.connections == most }.map { " (no sync at all: \(x($0.entitledUnsyncedOverRedis)))" } ?? ""
            goals.append(
                Goal(
                    name: "durable writes at \(most) conns vs Redis", target: "≥ 1.50×", measured: ratio.map { x($0.entitledOverRedis) + ceiling } ?? "—",
                    met: ratio.map { $0.entitledOverRedis >= 1.5 }
                )
            )
            if let ratio = writes.generatorRatios.first(where: { $0.connections == most }) {
                goals.append(
                    Goal(
                        name: "generator vs redis-benchmark, \(most) conns (Redis)", target: "≥ 1.00×", measured: x(ratio.generatorOverRedisBenchmark),
                        met: ratio.generatorOverRedisBenchmark >= 1
                    )
                )
            }
        }
        guard let snapshot = report.snapshot else { return goals }
        let slowest = [snapshot.firstSnapshot, snapshot.secondSnapshot].compactMap { $0?.serverMs }.max()
        goals.append(
            Goal(
                name: "snapshot of \(Format.grouped(Double(snapshot.memberships))) memberships (slower of 2)", target: "< 3 s",
                measured: slowest.map { "\(Format.fixed(Double($0) / 1000, 3)) s" } ?? "—", met: slowest.map { $0 < 3000 }
            )
        )
        goals.append(
            Goal(
                name: "recovery, snapshot + log (median launch→ready)", target: "< 3 s",
                measured: snapshot.recoveryMedianSeconds.map { "\(Format.fixed($0, 3)) s" } ?? "—", met: snapshot.recoveryMedianSeconds.map { $0 < 3 }
            )
        )
        if let without = snapshot.checksWithoutSnapshot, let during = snapshot.checksDuringSnapshot {
            let ratio = without.latency.p99Ms > 0 ? during.latency.p99Ms / without.latency.p99Ms : nil
            let clean = during.errors == 0 && during.inactive == 0
            goals.append(
                Goal(
                    name: "check p99 during snapshot vs without", target: "≤ 1.30×",
                    measured: ratio.map { "\(x($0)) (\(Format.fixed(during.latency.p99Ms, 3)) / \(Format.fixed(without.latency.p99Ms, 3)) ms)" } ?? "—",
                    met: ratio.map { $0 <= 1.3 && clean }
                )
            )
            goals.append(
                Goal(
                    name: "check p99.9 during snapshot (without)", target: "reported",
                    measured: "\(Format.fixed(during.latency.p999Ms, 2)) ms (\(Format.fixed(without.latency.p999Ms, 2)))",
                    met: clean && during.latency.count > 0
                )
            )
        }
        return goals
    }

    static func timestamp() -> String {
        ISO8601DateFormatter().string(from: Date())
    }
}
