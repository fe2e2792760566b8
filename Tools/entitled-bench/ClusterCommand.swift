import ArgumentParser
import Foundation

/// `entitled-bench cluster`: a cluster of entitled nodes on one PostgreSQL next to a standalone entitled
/// (and Redis), in one run: checks on one node, durable grants spread over the nodes, replication lag.
struct ClusterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Cluster mode: checks on one node against standalone, durable grants across the nodes against standalone and Redis, replication lag.",
        discussion: """
            Needs a PostgreSQL database whose role may create schemas: a run uses a new schema, dropped afterwards \
            with psql. What is measured and how: Tools/entitled-bench/README.md.
            """
    )

    @OptionGroup var common: CommonOptions
    @Option(help: ArgumentHelp("The PostgreSQL database (default: ENTITLED_POSTGRES).", valueName: "url")) var postgres: String?
    @Option(name: .customLong("redis-server"), help: "The redis-server binary (a name is looked up on PATH); skipped when not found.") var redisServer = "redis-server"
    @Option(help: "Cluster nodes started.") var nodes = 3
    @Option(help: "Users loaded, each holding one membership.") var users = 20_000
    @Option(help: "Concurrent connections of the check and the grant loads.") var connections = 50
    @Option(help: "Seconds each measurement runs, after the warm-up.") var duration = 5.0
    @Option(help: "Seconds of warm-up before each measurement.") var warmup = 1.0
    @Option(help: "Measurements of each kind; medians are reported.") var runs = 3
    @Option(name: .customLong("lag-samples"), help: "Writes whose replication lag is measured.") var lagSamples = 300
    @Option(help: "The entitled-loadgen binary (default: next to this executable).") var loadgen: String?
    @Option(help: "Write the results as JSON to this file.") var json: String?

    func run() throws {
        guard let url = postgres ?? ProcessInfo.processInfo.environment["ENTITLED_POSTGRES"] else {
            throw ValidationError("name the database with --postgres URL or ENTITLED_POSTGRES")
        }
        guard nodes >= 2 else { throw ValidationError("--nodes must be at least 2: the lag is measured between two nodes") }
        let redis = Executables.find(redisServer)
        if redis == nil { progress("redis-server not found: the Redis column is skipped") }
        let workDirectory = try common.workRoot(prefix: "entitled-bench-cluster")
        let report = try measure(
            postgres: url, entitled: try Executables.entitled(common.entitled), redis: redis, workDirectory: workDirectory,
            neutral: NeutralLoad(binary: try Executables.loadGenerator(loadgen), directory: workDirectory)
        )
        print(report.table())
        if let json { try writeJSON(report, to: json) }
    }

    /// `nodes` entitled nodes on a new schema of the database, a standalone entitled (`--fsync always`) and
    /// Redis (`appendfsync always`), all driven by `entitled-loadgen`.
    private func measure(postgres: String, entitled: String, redis: String?, workDirectory: String, neutral: NeutralLoad) throws -> ClusterReport {
        let schema = "bench_\(UInt32.random(in: 0...UInt32.max))"
        let url = postgres + (postgres.contains("?") ? "&" : "?") + "schema=" + schema
        defer { dropSchema(schema, postgres: postgres) }
        var report = ClusterReport(nodes: nodes, users: users, connections: connections, duration: duration, runs: runs)
        let cluster = try (1...nodes).map { try Server.node(entitled, postgres: url, name: "bench\($0)") }
        defer { for node in cluster { node.process.stop() } }
        let standalone = try Server.entitled(entitled, dataDirectory: workDirectory + "/standalone", fsync: "always")
        defer { standalone.process.stop() }
        let redisServer = try redis.map { try Server.redis($0, directory: workDirectory, appendfsync: "always") }
        defer { redisServer?.process.stop() }

        progress("loading \(users) users into the cluster (through node 1) and the standalone server")
        for server in [cluster[0], standalone] { _ = try PipelinedLoader.grants(to: server, users: users) }
        // Every node holds the load before checks are measured on the last one.
        var waits = 0
        while try !cluster[nodes - 1].denied([String(format: "%012d", users - 1)]).isEmpty {
            guard waits < 600 else { throw BenchError("node \(nodes) never saw the last user of the load") }
            waits += 1
            usleep(50_000)
        }

        let shape = LoadShape(connections: connections, pipeline: 1, users: users, distribution: .uniform, mix: .checks)
        for run in 1...runs {
            for (name, server) in [("cluster node", cluster[nodes - 1]), ("standalone", standalone)] {
                let result = RunResult(try neutral.measure(server, shape: shape, warmup: warmup, duration: duration, seed: UInt64(run)))
                progress("checks run \(run)/\(runs), \(name): \(Int(result.requestsPerSecond)) req/s, p99 \(Int(result.p99Microseconds)) µs")
                report.checks[name, default: []].append(result)
            }
        }
        for run in 1...runs {
            // Users never granted before, and each node's generator its own: writes on different nodes touching
            // one user would be decided again (a conflict), which is not what this measures.
            let firstUser = UInt64(users) + UInt64(run) * 100_000_000
            let (spread, lags) = try grantsAcross(cluster, neutral: neutral, firstUser: firstUser)
            progress("grants run \(run)/\(runs), cluster (\(connections) connections over \(nodes) nodes): \(Int(spread.requestsPerSecond)) req/s, \(lags.count) lag samples meanwhile")
            report.grants["cluster", default: []].append(spread)
            report.lagUnderLoadMicroseconds += lags
            let others = [("standalone", standalone, "standalone --fsync always")] + (redisServer.map { [("redis", $0, "redis appendfsync always")] } ?? [])
            for (name, server, label) in others {
                let result = RunResult(
                    try neutral.measureNewUsers(server, connections: connections, warmup: warmup, duration: duration, firstUser: firstUser)
                )
                progress("grants run \(run)/\(runs), \(label): \(Int(result.requestsPerSecond)) req/s")
                report.grants[name, default: []].append(result)
            }
        }
        report.lagMicroseconds = try measureLag(writer: cluster[0].port, reader: cluster[1].port, samples: lagSamples)
        report.summarize()
        return report
    }

    /// Durable grants to new users over `connections` connections spread evenly over the nodes, measured
    /// together: one generator per node. Meanwhile (after the warm-up) one more thread measures the
    /// replication lag under that load, node 1 to node 2, with `minSeq` reads (a few hundred grants a
    /// second, not counted).
    private func grantsAcross(_ nodes: [Server], neutral: NeutralLoad, firstUser: UInt64) throws -> (RunResult, lags: [Double]) {
        let (ports, count) = (nodes.map(\.port), nodes.count)
        let share = nodes.indices.map { connections / count + ($0 < connections % count ? 1 : 0) }
        let (warmup, duration) = (self.warmup, self.duration)
        let results = try onThreads(count + 1, name: "cluster-grants") { index -> (LoadOutcome?, [Double]) in
            guard index < count else {
                usleep(UInt32(warmup * 1_000_000))
                let end = monotonicNanoseconds() + UInt64(duration * 1e9)
                return (nil, try measureLag(writer: ports[0], reader: ports[1], until: end, waitingWithMinSeq: true))
            }
            let outcome = try neutral.measureNewUsers(
                nodes[index], connections: share[index], warmup: warmup, duration: duration, firstUser: firstUser + UInt64(index) * 10_000_000
            )
            return (outcome, [])
        }
        var merged = LoadOutcome()
        for case let (outcome?, _) in results { merged.merge(outcome) }
        merged.windowSeconds = duration
        return (RunResult(merged), results.flatMap(\.1))
    }

    /// From a grant's acknowledgement on `writer` until `reader` answers a check of it as active, for `samples`
    /// grants one after another or until `until` (monotonic ns). The check is polled back to back on one
    /// connection, or, `waitingWithMinSeq`, asked once with the grant's `seq` as `minSeq` (answered as the
    /// replica applies it: the read-your-writes path, and no polling to take a core from servers under load).
    private func measureLag(writer: UInt16, reader: UInt16, samples: Int = .max, until: UInt64 = .max, waitingWithMinSeq: Bool = false) throws -> [Double] {
        let write = try TCPConnection(port: writer)
        let writeReader = LineReader(write)
        let read = try TCPConnection(port: reader)
        let readReader = LineReader(read)
        var lags: [Double] = []
        for sample in 0..<samples {
            guard monotonicNanoseconds() < until else { break }
            let user = "lag-\(getpid())-\(until == .max ? "idle" : "load\(until)")-\(sample)"
            let answer = try write.call(#"{"op":"grant","user":"\#(user)","product":"prod_pro"}"#, reader: writeReader)
            guard answer.hasPrefix(#"{"ok":true"#) else { throw BenchError("a lag grant failed: \(answer)") }
            let acknowledged = monotonicNanoseconds()
            if waitingWithMinSeq {
                guard let seq = answer.firstMatch(of: /"seq":(\d+)/)?.1 else { throw BenchError("a lag grant's answer has no seq: \(answer)") }
                let read = try read.call(#"{"op":"check","user":"\#(user)","entitlement":"pro","minSeq":\#(seq)}"#, reader: readReader)
                guard read.contains(#""active":true"#) else { throw BenchError("node on port \(reader) answered \(read) to minSeq \(seq)") }
            } else {
                var seen = false
                while !seen && monotonicNanoseconds() - acknowledged < 10_000_000_000 {
                    seen = try read.call(#"{"op":"check","user":"\#(user)","entitlement":"pro"}"#, reader: readReader).contains(#""active":true"#)
                }
                guard seen else { throw BenchError("node on port \(reader) did not see \(user) within 10 s") }
            }
            lags.append(Double(monotonicNanoseconds() - acknowledged) / 1000)
        }
        return lags
    }

    private func dropSchema(_ schema: String, postgres: String) {
        guard let psql = Executables.find("psql") else { return progress("psql not found: drop schema \(schema) by hand") }
        _ = try? ChildProcess.launch(psql, [postgres, "-qc", "DROP SCHEMA IF EXISTS \(schema) CASCADE"], name: "psql").waitForExit(timeout: 60)
    }
}
