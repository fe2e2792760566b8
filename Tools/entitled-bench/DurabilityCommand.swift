import ArgumentParser
import Foundation

/// `entitled-bench durability`: durable writes next to Redis, snapshot and recovery times at scale.
struct DurabilityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "durability",
        abstract: "Measures entitled's durable write rate next to Redis, and its snapshot and recovery times at scale.",
        discussion: "What is measured and how: Tools/entitled-bench/README.md."
    )

    @OptionGroup var common: CommonOptions
    @Option(name: .customLong("redis-server"), help: "The redis-server binary (a name is looked up on PATH). Without it the Redis half is skipped.")
    var redisServer = "redis-server"
    @Option(help: "The entitled-loadgen binary (default: next to this executable).") var loadgen: String?
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
    @Option(help: "Also write the full results, every run included, as JSON to this file.") var json: String?
    @Flag(help: "Also measure both servers with no sync at all (entitled --fsync no, Redis appendfsync no): the most any way of syncing could reach.")
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
    }

    func run() throws {
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
            startedAt: timestamp(), command: CommandLine.arguments, machine: machine,
            settings: DurabilitySettings(
                durationSeconds: duration, warmupSeconds: warmup, runs: runs, connections: counts, memberships: memberships, logGrants: logGrants,
                checkConnections: checkConnections, loadConnections: loadConnections, loadWindow: loadWindow,
                entitledBinary: entitledPath, redisServer: redisPath, redisVersion: redisPath.map { Server.redisVersion(binary: $0) },
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
        report.finishedAt = timestamp()
        report.goals = Goal.judging(report)
        print(DurabilityReportTable.render(report))
        if let json {
            try writeJSON(report, to: json)
        } else {
            print("\n(no --json PATH given: only this table was kept)")
        }
    }
}
