import ArgumentParser
import Foundation
import Histogram

/// `entitled-bench checks`: the same check load against entitled and Redis, in one run.
struct ChecksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checks",
        abstract: "Runs the same load of access checks against entitled and redis-server and reports the ratio.",
        discussion: """
            Starts entitled and redis-server on 127.0.0.1, gives --users users one membership each (entitled: a \
            grant of prod_pro, which unlocks entitlement pro; Redis: SADD ents:<user> pro), then for each scenario \
            (--connections × --pipeline) drives both in turn, --runs times, with entitled-loadgen: entitled \
            {"op":"check","user":...,"entitlement":"pro"} against Redis SISMEMBER ents:<user> pro. Reports the \
            medians of throughput, latency and each server's CPU time per request (from /proc), and entitled's \
            ratios to Redis. --validate also runs redis-benchmark against the same Redis and load.
            """
    )

    @OptionGroup var common: CommonOptions
    @Option(
        name: .customLong("entitled-option"), parsing: .unconditionalSingleValue,
        help: "An extra option for entitled, e.g. --entitled-option=--event-loops=1; repeat for several."
    )
    var entitledOptions: [String] = []
    @Option(name: .customLong("redis-server"), help: "The redis-server binary (a name is looked up on PATH).") var redisServer = "redis-server"
    @Option(help: "The entitled-loadgen binary (default: entitled-loadgen next to this executable).") var loadgen: String?
    @Option(help: "Users loaded, each holding one membership.") var users = 100_000
    @Option(name: .customLong("connections"), help: "Concurrent connections; repeat for several scenarios (default: 50 and 1).") var connections: [Int] = []
    @Option(name: .customLong("pipeline"), help: "Requests in flight per connection; repeat for several (default: 1 and 16).") var pipelines: [Int] = []
    @Option(help: "Seconds each measurement runs, after the warm-up.") var duration = 5.0
    @Option(help: "Seconds of warm-up before each measurement (sent, not counted).") var warmup = 1.0
    @Option(help: "Measurements per server and scenario; medians are reported.") var runs = 5
    @Option(help: "Which users the requests name: uniform or skewed (Zipfian, θ 0.99).") var distribution: KeyDistribution = .uniform
    @Option(help: "checks (only checks) or mixed (95% checks, 5% grants).") var mix: OperationMix = .checks
    @Option(help: "Durability of both servers' writes: always, everysec or no (entitled --fsync, Redis appendfsync).") var fsync = "always"
    @Flag(name: .customLong("validate"), help: "Also run redis-benchmark with the same connections, pipeline and keys against the same Redis, once per run.")
    var compareWithRedisBenchmark = false
    @Option(help: "Connections opened to each server before measuring and held open, silent, throughout: do many idle clients slow the busy ones?")
    var idleConnections = 0
    @Option(help: "Write the results, every run included, as JSON to this file.") var json: String?
    @Option(help: "Write a plot of both latency distributions (SVG) to this file.") var plot: String?
    @Option(help: "Write a chart of entitled's ratios to Redis per load, throughput and server CPU per request (SVG), to this file.") var chart: String?

    func validate() throws {
        guard (1...50_000_000).contains(users) else { throw ValidationError("--users must be 1 to 50000000") }
        guard connections.allSatisfy({ (1...10_000).contains($0) }) else { throw ValidationError("--connections must be 1 to 10000") }
        guard pipelines.allSatisfy({ (1...10_000).contains($0) }) else { throw ValidationError("--pipeline must be 1 to 10000") }
        guard duration > 0 && duration <= 600 else { throw ValidationError("--duration must be above 0 and at most 600 seconds") }
        guard warmup >= 0 && warmup <= 60 else { throw ValidationError("--warmup must be 0 to 60 seconds") }
        guard (1...50).contains(runs) else { throw ValidationError("--runs must be 1 to 50") }
        guard ["always", "everysec", "no"].contains(fsync) else { throw ValidationError("--fsync must be always, everysec or no") }
        guard (0...9_000).contains(idleConnections) else {
            throw ValidationError("--idle-connections must be 0 to 9000 (both servers' default limits are 10000)")
        }
    }

    func run() throws {
        cleanup.installSignalHandlers()
        defer { cleanup.runAll() }
        let report = try measure()
        print(ChecksReportTable.render(report))
        if let json { try writeJSON(report, to: json) }
        if let plot { try writeSVG(LatencyPlot.svg(report), to: plot, naming: "plot") }
        if let chart { try writeSVG(RatioChart.svg(report), to: chart, naming: "chart") }
    }

    /// A server measured: what the generator talks to and whose CPU time it reads.
    private typealias Server = (target: Target, port: UInt16, pid: pid_t)

    /// Starts both servers, loads them, measures every scenario on each.
    private func measure() throws -> ChecksReport {
        let (entitledPath, redisPath) = try Executables.servers(entitled: common.entitled, redisServer: redisServer)
        let workRoot = try common.workRoot(prefix: "entitled-bench-checks")
        var report = ChecksReport(
            startedAt: ISO8601DateFormatter().string(from: Date()), command: CommandLine.arguments, machine: MachineInfo.current(workDirectory: workRoot),
            settings: ChecksSettings(
                users: users, durationSeconds: duration, warmupSeconds: warmup, runs: runs, distribution: distribution, mix: mix, fsync: fsync,
                idleConnections: idleConnections, entitledBinary: entitledPath, redisServer: redisPath, redisVersion: RedisProcess.version(binary: redisPath)
            )
        )
        let neutral = NeutralLoad(binary: try Executables.loadGenerator(loadgen), directory: workRoot)
        try FileManager.default.createDirectory(atPath: workRoot + "/redis", withIntermediateDirectories: true)
        let entitled = try EntitledProcess.start(binary: entitledPath, dataDirectory: workRoot + "/entitled", fsync: fsync, extraArguments: entitledOptions)
        defer { entitled.process.stop() }
        let redis = try RedisProcess.start(binary: redisPath, directory: workRoot + "/redis", appendfsync: fsync)
        defer { redis.process.stop() }

        try EntitledProcess.defineProEntitlement(port: entitled.port)
        let servers: [Server] = [(.entitled, entitled.port, entitled.process.pid), (.redis, redis.port, redis.process.pid)]
        for server in servers {
            progress("loading \(users) users into \(server.target.rawValue)")
            let loaded = try PipelinedLoader.grants(port: server.port, target: server.target, users: users)
            guard loaded.errors == 0 else {
                throw BenchError("loading \(server.target.rawValue) failed: \(loaded.errors) errors, the first: \(loaded.firstError ?? "?")")
            }
            report.loadSeconds[server.target.rawValue] = loaded.seconds
        }
        report.residentBytesAfterLoad = ["entitled": entitled.process.residentBytes(), "redis": redis.process.residentBytes()].compactMapValues { $0 }

        // Held to the end of the measurements: each server serves its load beside them.
        var idle: [TCPConnection] = []
        if idleConnections > 0 {
            progress("opening \(idleConnections) idle connections to each server")
            try raiseDescriptorLimit(to: 2 * idleConnections + 1_024)
            for server in servers {
                for _ in 0..<idleConnections { idle.append(try TCPConnection(port: server.port)) }
            }
        }
        defer { withExtendedLifetime(idle) {} }

        let redisBenchmark = compareWithRedisBenchmark && mix == .checks ? Executables.redisBenchmark(besideRedisServer: redisPath) : nil
        if compareWithRedisBenchmark && mix == .checks && redisBenchmark == nil { progress("no redis-benchmark found: --validate skipped") }
        for connections in connections.isEmpty ? [50, 1] : connections {
            for pipeline in pipelines.isEmpty ? [1, 16] : pipelines where !(connections == 1 && pipeline > 1 && pipelines.isEmpty) {
                report.scenarios.append(
                    try measure(connections: connections, pipeline: pipeline, servers: servers, neutral: neutral, redisBenchmark: redisBenchmark)
                )
            }
        }
        report.ratios = report.scenarios.map(ScenarioRatios.init)
        return report
    }

    /// One scenario, `runs` times on each server, alternating within each run so that a slow period of the
    /// machine touches both servers alike.
    private func measure(connections: Int, pipeline: Int, servers: [Server], neutral: NeutralLoad, redisBenchmark: String?) throws -> ScenarioResult {
        let shape = LoadShape(connections: connections, pipeline: pipeline, users: users, distribution: distribution, mix: mix)
        var result = ScenarioResult(connections: connections, pipeline: pipeline)
        var spectra = [Target: Histogram<UInt64>]()
        for run in 1...runs {
            for server in servers {
                let outcome = try neutral.measure(
                    port: server.port, serverPID: server.pid, target: server.target, shape: shape, warmup: warmup, duration: duration, seed: UInt64(run)
                )
                let measured = RunResult(outcome)
                let cpu = measured.serverCPUMicrosecondsPerRequest.map { String(format: ", server CPU %.2f µs/req", $0) } ?? ""
                progress(
                    "\(connections) conns, pipeline \(pipeline), run \(run)/\(runs): \(server.target.rawValue) "
                        + "\(Int(measured.requestsPerSecond)) req/s, p99 \(Int(measured.p99Microseconds)) µs\(cpu)"
                )
                if server.target == .entitled { result.entitled.append(measured) } else { result.redis.append(measured) }
                spectra[server.target, default: LoadOutcome.latencyHistogram()].add(outcome.histogram)
            }
            // redis-benchmark in every run, right after the generator drove Redis: Redis's own rate drifts by
            // 10% and more between runs, and a single run against a median of five could put either ahead.
            if let redisBenchmark, let redis = servers.last, let generatorRun = result.redis.last {
                let measured = try RedisBenchmarkRun(
                    port: redis.port, connections: connections, pipeline: pipeline, requests: max(100_000, Int(generatorRun.requestsPerSecond * duration)),
                    keyRange: users, command: ["SISMEMBER", "ents:__rand_int__", "pro"]
                ).run(binary: redisBenchmark)
                progress("redis-benchmark \(connections) conns, pipeline \(pipeline): \(Int(measured.requestsPerSecond)) req/s")
                result.redisBenchmarkRuns.append(measured.requestsPerSecond)
            }
        }
        result.entitledSpectrum = PercentilePoint.points(of: spectra[.entitled] ?? LoadOutcome.latencyHistogram())
        result.redisSpectrum = PercentilePoint.points(of: spectra[.redis] ?? LoadOutcome.latencyHistogram())
        if !result.redisBenchmarkRuns.isEmpty {
            result.redisBenchmarkRequestsPerSecond = median(result.redisBenchmarkRuns)
            result.generatorOverRedisBenchmark = median(zip(result.redis, result.redisBenchmarkRuns).map { $0.requestsPerSecond / $1 })
        }
        return result
    }
}

extension KeyDistribution: ExpressibleByArgument {}
extension OperationMix: ExpressibleByArgument {}
