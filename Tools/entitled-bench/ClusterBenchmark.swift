import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The cluster measurements, on fresh processes: `nodes` entitled nodes on a new schema of one PostgreSQL,
/// a standalone entitled (`--fsync always`) and Redis (`appendfsync always`).
struct ClusterBenchmark {
    let entitled: String
    let postgres: String
    let redis: String?
    let nodes: Int
    let users: Int
    let connections: Int
    let duration: Double
    let warmup: Double
    let runs: Int
    let lagSamples: Int
    let workDirectory: String
    /// `entitled-loadgen`, which drives the durable grants (the C generator, frugal with the shared cores).
    let loadgen: String

    func run() throws -> ClusterReport {
        let schema = "bench_\(UInt32.random(in: 0...UInt32.max))"
        let separator = postgres.contains("?") ? "&" : "?"
        let url = postgres + separator + "schema=" + schema
        defer { dropSchema(schema) }
        let directory = workDirectory + "/entitled-bench-cluster-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        var report = ClusterReport(nodes: nodes, users: users, connections: connections, duration: duration, runs: runs)
        let cluster = try (1...nodes).map { try EntitledProcess.startNode(binary: entitled, postgres: url, name: "bench\($0)") }
        defer { for node in cluster { _ = node.process.stop() } }
        let standalone = try EntitledProcess.start(binary: entitled, dataDirectory: directory + "/standalone", fsync: "always")
        defer { _ = standalone.process.stop() }
        let redisProcess = try redis.map { try RedisProcess.start(binary: $0, directory: directory, appendfsync: "always") }
        defer { _ = redisProcess?.process.stop() }

        progress("loading \(users) users into the cluster (through node 1) and the standalone server")
        for port in [cluster[0].port, standalone.port] {
            try EntitledProcess.defineProEntitlement(port: port)
            let loaded = try LoadEngine.load(port: port, target: .entitled, users: users)
            guard loaded.errors == 0 else { throw BenchError("loading failed: \(loaded.firstError ?? "?")") }
        }
        // Every node holds the load before checks are measured on the last one.
        try waitUntilActive(port: cluster[nodes - 1].port, user: String(format: "%012d", users - 1))

        let shape = LoadShape(connections: connections, pipeline: 1, users: users, distribution: .uniform, mix: .checks)
        for run in 1...runs {
            for (name, port) in [("cluster node", cluster[nodes - 1].port), ("standalone", standalone.port)] {
                let outcome = try LoadEngine.measure(
                    port: port, target: .entitled, shape: shape, threads: 1, warmup: warmup, duration: duration, seed: UInt64(run)
                )
                let result = RunResult(outcome)
                progress("checks run \(run)/\(runs), \(name): \(Int(result.requestsPerSecond)) req/s, p99 \(Int(result.p99Microseconds)) µs")
                report.checks[name, default: []].append(result)
            }
        }
        let neutral = NeutralLoad(binary: loadgen, directory: directory)
        for run in 1...runs {
            // Users never granted before, and each node's generator its own: writes on different nodes touching
            // one user would be decided again (a conflict), which is not what this measures.
            let firstUser = UInt64(users) + UInt64(run) * 100_000_000
            let (spread, lags) = try grantsAcross(cluster, neutral: neutral, firstUser: firstUser)
            progress("grants run \(run)/\(runs), cluster (\(connections) connections over \(nodes) nodes): \(Int(spread.requestsPerSecond)) req/s, \(lags.count) lag samples meanwhile")
            report.grants["cluster", default: []].append(spread)
            report.lagUnderLoadMicroseconds += lags
            let single = RunResult(try neutral.measureNewUsers(
                port: standalone.port, serverPID: standalone.process.pid, target: .entitled, connections: connections, warmup: warmup,
                duration: duration, firstUser: firstUser
            ))
            progress("grants run \(run)/\(runs), standalone --fsync always: \(Int(single.requestsPerSecond)) req/s")
            report.grants["standalone", default: []].append(single)
            if let redisProcess {
                let redisRun = RunResult(try neutral.measureNewUsers(
                    port: redisProcess.port, serverPID: redisProcess.process.pid, target: .redis, connections: connections, warmup: warmup,
                    duration: duration, firstUser: firstUser
                ))
                progress("grants run \(run)/\(runs), redis appendfsync always: \(Int(redisRun.requestsPerSecond)) req/s")
                report.grants["redis", default: []].append(redisRun)
            }
        }
        report.lagMicroseconds = try measureLag(writer: cluster[0].port, reader: cluster[1].port, samples: lagSamples)
        report.summarize()
        return report
    }

    private func waitUntilActive(port: UInt16, user: String) throws {
        let connection = try TCPConnection(port: port)
        let reader = LineReader(connection)
        for _ in 0..<600 {
            if try connection.call(#"{"op":"check","user":"\#(user)","entitlement":"pro"}"#, reader: reader).contains(#""active":true"#) { return }
            usleep(50_000)
        }
        throw BenchError("node on port \(port) never saw \(user)")
    }

    /// Durable grants to new users over `connections` connections spread evenly over the nodes, measured
    /// together: one generator thread per node. Meanwhile (after the warm-up) one more thread measures the
    /// replication lag under that load, node 1 to node 2, as `measureLag` does; its grants are a few
    /// hundred a second, not counted.
    private func grantsAcross(_ nodes: [EntitledProcess], neutral: NeutralLoad, firstUser: UInt64) throws -> (RunResult, lags: [Double]) {
        let ports = nodes.map(\.port), pids = nodes.map(\.process.pid)
        let share = ports.enumerated().map { index, _ in connections / ports.count + (index < connections % ports.count ? 1 : 0) }
        let (warmup, duration) = (self.warmup, self.duration)
        let results = try onThreads(ports.count + 1, name: "cluster-grants") { index -> (LoadOutcome?, [Double]) in
            guard index < ports.count else {
                usleep(UInt32(warmup * 1_000_000))
                let end = monotonicNanoseconds() + UInt64(duration * 1e9)
                return (nil, try measureLag(writer: ports[0], reader: ports[1], until: end, waitingWithMinSeq: true))
            }
            let outcome = try neutral.measureNewUsers(
                port: ports[index], serverPID: pids[index], target: .entitled, connections: share[index], warmup: warmup,
                duration: duration, firstUser: firstUser + UInt64(index) * 10_000_000
            )
            return (outcome, [])
        }
        var merged = LoadOutcome()
        for case let (outcome?, _) in results { merged.merge(outcome) }
        merged.windowSeconds = duration
        return (RunResult(merged), results.flatMap(\.1))
    }

    /// From a grant's acknowledgement on `writer` until `reader` answers a check of it as active, for
    /// `samples` grants one after another or until `until` (monotonic ns). The check is polled back to back
    /// on one connection, or, `waitingWithMinSeq`, asked once with the grant's `seq` as `minSeq` (answered
    /// as the replica applies it: the read-your-writes path, and no polling to take a core from servers
    /// under load).
    private func measureLag(
        writer: UInt16, reader: UInt16, samples: Int = .max, until: UInt64 = .max, waitingWithMinSeq: Bool = false
    ) throws -> [Double] {
        let write = try TCPConnection(port: writer)
        let writeReader = LineReader(write)
        let read = try TCPConnection(port: reader)
        let readReader = LineReader(read)
        var lags: [Double] = []
        // A loop that ends at the deadline: a `where` clause would only skip the rest of 0..<samples.
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
                lags.append(Double(monotonicNanoseconds() - acknowledged) / 1000)
                continue
            }
            var seen = false
            while monotonicNanoseconds() - acknowledged < 10_000_000_000 {
                if try read.call(#"{"op":"check","user":"\#(user)","entitlement":"pro"}"#, reader: readReader).contains(#""active":true"#) {
                    seen = true
                    break
                }
            }
            guard seen else { throw BenchError("node on port \(reader) did not see \(user) within 10 s") }
            lags.append(Double(monotonicNanoseconds() - acknowledged) / 1000)
        }
        return lags
    }

    private func dropSchema(_ schema: String) {
        guard let psql = Executables.find("psql") else {
            progress("psql not found: drop schema \(schema) by hand")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: psql)
        process.arguments = [postgres, "-qc", "DROP SCHEMA IF EXISTS \(schema) CASCADE"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
        process.waitUntilExit()
    }
}
