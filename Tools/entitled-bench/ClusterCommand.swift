import ArgumentParser
import Foundation

/// `entitled-bench cluster`: a cluster of entitled nodes on one PostgreSQL next to a standalone entitled
/// (and Redis), in one run: checks on one node, durable grants spread over the nodes, replication lag.
struct ClusterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Cluster mode: checks on one node against standalone, durable grants across the nodes against standalone and Redis, replication lag.",
        discussion: """
            Needs a PostgreSQL database (--postgres or ENTITLED_POSTGRES) whose role may create schemas: each \
            run uses a new schema (bench_<random>) and drops it afterwards (with psql, when it is on PATH). \
            Starts --nodes entitled processes on it, a standalone entitled with --fsync always, and Redis with \
            appendfsync always when redis-server is found.
            """
    )

    @Option(help: "The entitled binary (default: entitled next to this executable, in the same build folder).")
    var entitled: String?

    @Option(help: ArgumentHelp("The PostgreSQL database (default: ENTITLED_POSTGRES).", valueName: "url"))
    var postgres: String?

    @Option(name: .customLong("redis-server"), help: "The redis-server binary (a name is looked up on PATH); skipped when not found.")
    var redisServer = "redis-server"

    @Option(help: "Cluster nodes started.")
    var nodes = 3

    @Option(help: "Users loaded, each holding one membership.")
    var users = 20_000

    @Option(help: "Concurrent connections of the check and the grant loads.")
    var connections = 50

    @Option(help: "Seconds each measurement runs, after the warm-up.")
    var duration = 5.0

    @Option(help: "Seconds of warm-up before each measurement.")
    var warmup = 1.0

    @Option(help: "Measurements of each kind; medians are reported.")
    var runs = 3

    @Option(name: .customLong("lag-samples"), help: "Writes whose replication lag is measured.")
    var lagSamples = 300

    @Option(help: "The entitled-loadgen binary that drives the durable grants (default: next to this executable).")
    var loadgen: String?

    @Option(name: .customLong("work-dir"), help: "Where the standalone server's and Redis's data go.")
    var workDir = FileManager.default.temporaryDirectory.path

    @Option(help: "Write the results as JSON to this file.")
    var json: String?

    func run() throws {
        guard let url = postgres ?? ProcessInfo.processInfo.environment["ENTITLED_POSTGRES"] else {
            throw ValidationError("name the database with --postgres URL or ENTITLED_POSTGRES")
        }
        guard nodes >= 2 else { throw ValidationError("--nodes must be at least 2: the lag is measured between two nodes") }
        let binary = entitled ?? Executables.defaultEntitled()
        let redis = Executables.find(redisServer)
        if redis == nil { progress("redis-server not found: the Redis column is skipped") }
        let benchmark = ClusterBenchmark(
            entitled: binary, postgres: url, redis: redis, nodes: nodes, users: users, connections: connections,
            duration: duration, warmup: warmup, runs: runs, lagSamples: lagSamples, workDirectory: workDir,
            loadgen: try Executables.loadGenerator(loadgen)
        )
        let report = try benchmark.run()
        print(report.table())
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(report).write(to: URL(fileURLWithPath: json))
        }
    }
}
