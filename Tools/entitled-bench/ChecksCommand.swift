import ArgumentParser
import Foundation

/// `entitled-bench checks`: the same check load against entitled and Redis, in one run.
struct ChecksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checks",
        abstract: "Runs the same access checks against entitled and redis-server: throughput, latency, each server's CPU per request, ratios.",
        discussion: "What is measured and how: Tools/entitled-bench/README.md."
    )

    @OptionGroup var common: CommonOptions
    @Option(name: .customLong("entitled-option"), parsing: .unconditionalSingleValue, help: "An extra option for entitled (--entitled-option=--event-loops=1); repeatable.")
    var entitledOptions: [String] = []
    @Option(name: .customLong("redis-server"), help: "The redis-server binary (a name is looked up on PATH).") var redisServer = "redis-server"
    @Option(help: "The entitled-loadgen binary (default: next to this executable).") var loadgen: String?
    @Option(help: "Users loaded, each holding one membership.") var users = 100_000
    @Option(name: .customLong("connections"), help: "Concurrent connections; repeatable (default: 50 and 1).") var connections: [Int] = []
    @Option(name: .customLong("pipeline"), help: "Requests in flight per connection; repeatable (default: 1 and 16).") var pipelines: [Int] = []
    @Option(help: "Seconds each measurement runs, after the warm-up.") var duration = 5.0
    @Option(help: "Seconds of warm-up before each measurement (sent, not counted).") var warmup = 1.0
    @Option(help: "Measurements per server and load; medians are reported.") var runs = 5
    @Option(help: "Which users the requests name: uniform or skewed (Zipfian, θ 0.99).") var distribution: KeyDistribution = .uniform
    @Option(help: "checks (only checks) or mixed (95% checks, 5% grants).") var mix: OperationMix = .checks
    @Option(help: "Both servers' write durability: always, everysec or no (entitled --fsync, Redis appendfsync).") var fsync = "always"
    @Option(help: "Write the results, every run included, as JSON to this file.") var json: String?
    @Option(help: "Write a chart of entitled's ratios to Redis per load (SVG) to this file.") var chart: String?

    func validate() throws {
        guard (1...50_000_000).contains(users) else { throw ValidationError("--users must be 1 to 50000000") }
        guard connections.allSatisfy({ (1...10_000).contains($0) }) else { throw ValidationError("--connections must be 1 to 10000") }
        guard pipelines.allSatisfy({ (1...10_000).contains($0) }) else { throw ValidationError("--pipeline must be 1 to 10000") }
        guard duration > 0 && duration <= 600 else { throw ValidationError("--duration must be above 0 and at most 600 seconds") }
        guard warmup >= 0 && warmup <= 60 else { throw ValidationError("--warmup must be 0 to 60 seconds") }
        guard (1...50).contains(runs) else { throw ValidationError("--runs must be 1 to 50") }
        guard ["always", "everysec", "no"].contains(fsync) else { throw ValidationError("--fsync must be always, everysec or no") }
    }

    func run() throws {
        let report = try measure()
        print(ChecksReportTable.render(report))
        if let json { try writeJSON(report, to: json) }
        if let chart { try write(Data(RatioChart.svg(report).utf8), to: chart, naming: "chart") }
    }

    /// Starts both servers, loads them, measures every load on each.
    private func measure() throws -> ChecksReport {
        let (entitledPath, redisPath) = (try Executables.entitled(common.entitled), try Executables.redisServer(redisServer))
        let workRoot = try common.workRoot(prefix: "entitled-bench-checks")
        var report = ChecksReport(
            startedAt: timestamp(), command: CommandLine.arguments, machine: MachineInfo.current(workDirectory: workRoot),
            settings: ChecksSettings(
                users: users, durationSeconds: duration, warmupSeconds: warmup, runs: runs, distribution: distribution, mix: mix, fsync: fsync,
                entitledBinary: entitledPath, redisServer: redisPath, redisVersion: Server.redisVersion(binary: redisPath)
            )
        )
        let neutral = NeutralLoad(binary: try Executables.loadGenerator(loadgen), directory: workRoot)
        let entitled = try Server.entitled(entitledPath, dataDirectory: workRoot + "/entitled", fsync: fsync, options: entitledOptions)
        defer { entitled.process.stop() }
        let redis = try Server.redis(redisPath, directory: workRoot + "/redis", appendfsync: fsync)
        defer { redis.process.stop() }
        for server in [entitled, redis] {
            progress("loading \(users) users into \(server.target.rawValue)")
            report.loadSeconds[server.target.rawValue] = try PipelinedLoader.grants(to: server, users: users)
        }
        report.residentBytesAfterLoad = ["entitled": entitled.process.residentBytes(), "redis": redis.process.residentBytes()].compactMapValues { $0 }
        for connections in connections.isEmpty ? [50, 1] : connections {
            for pipeline in pipelines.isEmpty ? [1, 16] : pipelines where !(connections == 1 && pipeline > 1 && pipelines.isEmpty) {
                report.scenarios.append(try measure(connections: connections, pipeline: pipeline, servers: [entitled, redis], neutral: neutral))
            }
        }
        report.ratios = report.scenarios.map(ScenarioRatios.init)
        return report
    }

    /// One load, `runs` times on each server, alternating within each run so that a slow period of the
    /// machine touches both servers alike.
    private func measure(connections: Int, pipeline: Int, servers: [Server], neutral: NeutralLoad) throws -> ScenarioResult {
        let shape = LoadShape(connections: connections, pipeline: pipeline, users: users, distribution: distribution, mix: mix)
        var result = ScenarioResult(connections: connections, pipeline: pipeline)
        for run in 1...runs {
            for server in servers {
                let measured = RunResult(try neutral.measure(server, shape: shape, warmup: warmup, duration: duration, seed: UInt64(run)))
                let cpu = measured.serverCPUMicrosecondsPerRequest.map { String(format: ", server CPU %.2f µs/req", $0) } ?? ""
                progress(
                    "\(connections) conns, pipeline \(pipeline), run \(run)/\(runs): \(server.target.rawValue) "
                        + "\(Int(measured.requestsPerSecond)) req/s, p99 \(Int(measured.p99Microseconds)) µs\(cpu)"
                )
                if server.target == .entitled { result.entitled.append(measured) } else { result.redis.append(measured) }
            }
        }
        return result
    }
}

extension KeyDistribution: ExpressibleByArgument {}
extension OperationMix: ExpressibleByArgument {}
