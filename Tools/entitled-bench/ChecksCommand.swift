import ArgumentParser
import Foundation

/// `entitled-bench checks`: the same check load against entitled and Redis, in one run.
struct ChecksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checks",
        abstract: "Runs the same load of access checks against entitled and redis-server and reports the ratio.",
        discussion: """
            Starts entitled and redis-server on 127.0.0.1 with fresh data directories, gives --users users one \
            membership each (entitled: a grant of prod_pro, which unlocks entitlement pro; Redis: SADD \
            ents:<user> pro), then for each scenario (--connections × --pipeline) runs the load against each \
            server in turn, --runs times, and reports the medians: throughput, p50/p99/p99.9 latency and \
            entitled's ratio to Redis. A check is entitled {"op":"check","user":...,"entitlement":"pro"} and \
            Redis SISMEMBER ents:<user> pro. With --validate it also runs redis-benchmark against the same \
            Redis and load, to show the load generator is not the bottleneck.
            """
    )

    @Option(help: "The entitled binary (default: entitled next to this executable, in the same build folder).")
    var entitled: String?

    @Option(
        name: .customLong("entitled-option"),
        parsing: .unconditionalSingleValue,
        help: "An extra option for entitled, e.g. --entitled-option=--event-loops=1; repeat for several."
    )
    var entitledOptions: [String] = []

    @Option(name: .customLong("redis-server"), help: "The redis-server binary (a name is looked up on PATH).")
    var redisServer = "redis-server"

    @Option(help: "Users loaded, each holding one membership.")
    var users = 100_000

    @Option(name: .customLong("connections"), help: "Concurrent connections; repeat for several scenarios (default: 50 and 1).")
    var connections: [Int] = []

    @Option(name: .customLong("pipeline"), help: "Requests in flight per connection; repeat for several (default: 1 and 16).")
    var pipelines: [Int] = []

    @Option(help: "Seconds each measurement runs, after the warm-up.")
    var duration = 5.0

    @Option(help: "Seconds of warm-up before each measurement (sent, not counted).")
    var warmup = 1.0

    @Option(help: "Measurements per server and scenario; medians are reported.")
    var runs = 5

    @Option(help: "Which users the requests name: uniform or skewed (Zipfian, θ 0.99).")
    var distribution: KeyDistribution = .uniform

    @Option(help: "checks (only checks) or mixed (95% checks, 5% grants).")
    var mix: OperationMix = .checks

    @Option(help: "Durability of both servers' writes: always, everysec or no (entitled --fsync, Redis appendfsync).")
    var fsync = "always"

    @Option(
        help: """
            The load generator: c (entitled-loadgen, built beside this tool: one thread, epoll, no spinning, \
            so it takes little CPU from the server measured) or swift (this tool's own, with --threads and \
            --generator-spin). Only c reads the servers' CPU time per request.
            """
    )
    var generator: GeneratorKind = .c

    @Option(help: "The entitled-loadgen binary (default: entitled-loadgen next to this executable).")
    var loadgen: String?

    @Option(help: "Load generator threads of the swift generator (redis-benchmark uses 1).")
    var threads = 1

    @Option(
        name: .customLong("generator-spin"),
        help: """
            Microseconds the load generator keeps polling for answers before it sleeps, as a busy client \
            does; 0 makes it sleep at once, as redis-benchmark does.
            """
    )
    var generatorSpin = 100

    @Flag(
        name: .customLong("validate"),
        help: "Also run redis-benchmark with the same connections, pipeline and keys against the same Redis, once per run."
    )
    var compareWithRedisBenchmark = false

    @Option(help: "Connections opened to each server before measuring and held open, silent, throughout: do many idle clients slow the busy ones?")
    var idleConnections = 0

    @Option(name: .customLong("work-dir"), help: "Where the temporary data directories go.")
    var workDir = NSTemporaryDirectory()

    @Option(help: "Write the results, every run included, as JSON to this file.")
    var json: String?

    @Option(help: "Write a plot of both latency distributions (SVG) to this file.")
    var plot: String?

    @Option(help: "Write a chart of entitled's ratios to Redis per load, throughput and server CPU per request (SVG), to this file.")
    var chart: String?

    func validate() throws {
        guard (1...50_000_000).contains(users) else { throw ValidationError("--users must be 1 to 50000000") }
        guard connections.allSatisfy({ (1...10_000).contains($0) }) else { throw ValidationError("--connections must be 1 to 10000") }
        guard pipelines.allSatisfy({ (1...10_000).contains($0) }) else { throw ValidationError("--pipeline must be 1 to 10000") }
        guard duration > 0 && duration <= 600 else { throw ValidationError("--duration must be above 0 and at most 600 seconds") }
        guard warmup >= 0 && warmup <= 60 else { throw ValidationError("--warmup must be 0 to 60 seconds") }
        guard (1...50).contains(runs) else { throw ValidationError("--runs must be 1 to 50") }
        guard ["always", "everysec", "no"].contains(fsync) else { throw ValidationError("--fsync must be always, everysec or no") }
        guard (0...9_000).contains(idleConnections) else { throw ValidationError("--idle-connections must be 0 to 9000 (both servers' default limits are 10000)") }
        guard (1...64).contains(threads) else { throw ValidationError("--threads must be 1 to 64") }
        guard (0...10_000).contains(generatorSpin) else { throw ValidationError("--generator-spin must be 0 to 10000 microseconds") }
    }

    func run() throws {
        cleanup.installSignalHandlers()
        defer { cleanup.runAll() }
        let report = try ChecksBenchmark(options: self).run()
        print(ChecksReportTable.render(report))
        if let json {
            try writeJSON(report, to: json)
        }
        if let plot { try write(LatencyPlot.svg(report), to: plot, naming: "plot") }
        if let chart { try write(RatioChart.svg(report), to: chart, naming: "chart") }
    }
}

extension ChecksCommand {
    /// Writes an SVG `what` (the plot, the chart) to `path`, and says where.
    fileprivate func write(_ svg: String, to path: String, naming what: String) throws {
        do {
            try svg.write(toFile: path, atomically: true, encoding: .utf8)
            print("\(what): \(path)")
        } catch {
            throw BenchError("cannot write the \(what) \(path): \(error)")
        }
    }
}

extension KeyDistribution: ExpressibleByArgument {}
extension GeneratorKind: ExpressibleByArgument {}
extension OperationMix: ExpressibleByArgument {}
