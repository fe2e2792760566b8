#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Part 1: durable writes at each concurrency, entitled next to Redis, each run on fresh servers.
struct WriteBenchmark {
    let entitled: String
    /// nil skips Redis.
    let redis: String?
    let redisSkipped: String?
    let workDirectory: String
    let connections: [Int]
    let runs: Int
    let duration: Double
    let warmup: Double
    /// The longest wait for a quiet machine before each run (0: no wait).
    let settle: Double

    func run() -> WriteSection {
        var section = WriteSection(redisSkipped: redisSkipped)
        for count in connections {
            section.measurements.append(WriteMeasurement(system: "entitled", operation: "grant", connections: count))
            if redis != nil {
                section.measurements.append(WriteMeasurement(system: "redis", operation: "SADD", connections: count))
            }
        }
        // Runs interleave the systems and concurrencies, so a slow phase of the machine (another
        // process, the disk's cache) is spread over all of them instead of hitting one.
        for run in 1...runs {
            for index in section.measurements.indices {
                let measurement = section.measurements[index]
                progress(
                    "writes run \(run)/\(runs): \(measurement.system) \(measurement.operation), \(measurement.connections) connection(s), \(duration) s"
                )
                let result = measure(measurement.system, connections: measurement.connections, run: run)
                if let failure = result.failure { progress("  failed: \(failure)") } else {
                    progress(
                        "  \(Int(result.requestsPerSecond)) req/s, p50 \(ReportTable.format(result.latency?.p50Ms ?? 0, 3)) ms, p99 \(ReportTable.format(result.latency?.p99Ms ?? 0, 3)) ms, errors \(result.errors), other processes \(ReportTable.format(result.otherCPUCores ?? 0, 2)) cores"
                    )
                }
                section.measurements[index].runs.append(result)
            }
        }
        for index in section.measurements.indices {
            let done = section.measurements[index].runs.filter { $0.failure == nil && $0.latency != nil }
            guard !done.isEmpty else { continue }
            section.measurements[index].median = WriteMedian(
                requestsPerSecond: median(done.map(\.requestsPerSecond)),
                p50Ms: median(done.compactMap { $0.latency?.p50Ms }),
                p99Ms: median(done.compactMap { $0.latency?.p99Ms }),
                runsCounted: done.count
            )
        }
        for count in connections {
            let rate = { (system: String) in
                section.measurements.first { $0.system == system && $0.connections == count }?.median?.requestsPerSecond
            }
            if let ours = rate("entitled"), let theirs = rate("redis"), theirs > 0 {
                section.ratios.append(WriteRatio(connections: count, entitledOverRedis: ours / theirs))
            }
        }
        return section
    }

    /// One run: a fresh server in a fresh directory, the closed loop, the server stopped, the directory gone.
    private func measure(_ system: String, connections count: Int, run: Int) -> WriteRun {
        var result = WriteRun(run: run)
        if settle > 0 {
            let quiet = CPUMeter.waitForQuiet(threshold: 0.25, limit: settle)
            result.settleSeconds = quiet.waited
            if quiet.waited >= settle { progress("  the machine stayed busy (\(ReportTable.format(quiet.otherCores ?? 0, 2)) cores used by other processes); measuring anyway") }
        }
        var directory: String?
        var entitledServer: EntitledProcess?
        var redisServer: RedisProcess?
        do {
            let made = try cleanup.makeTemporaryDirectory(in: workDirectory, prefix: "\(system)-writes")
            directory = made
            let port: UInt16
            let workload: Workload
            if system == "entitled" {
                let server = try EntitledProcess.start(binary: entitled, dataDirectory: made, fsync: "always")
                entitledServer = server
                port = server.port
                workload = .entitledGrant(tag: "r\(run)")
            } else {
                let server = try RedisProcess.start(binary: redis ?? "redis-server", directory: made)
                redisServer = server
                port = server.port
                workload = .redisSAdd(tag: "r\(run)")
            }
            let links = try (0..<count).map { _ in try TCPConnection(port: port, timeoutSeconds: 30) }
            let meter = CPUMeter(serverPID: entitledServer?.process.pid ?? redisServer?.process.pid)
            defer { result.otherCPUCores = meter.otherCores() }
            let measureFrom = monotonicNanoseconds() + nanoseconds(seconds: warmup)
            let deadline = measureFrom + nanoseconds(seconds: duration)
            let loop = try ClosedLoop.run(connections: links, workload: workload, measureFrom: measureFrom, deadline: deadline)
            result.requests = loop.latencies.count
            result.requestsPerSecond = Double(loop.latencies.count) / duration
            result.errors = loop.errors
            result.firstError = loop.firstError
            result.latency = LatencySummary(nanoseconds: loop.latencies)
        } catch {
            result.failure = "\(error)"
        }
        if let server = entitledServer {
            // Graceful: entitled writes a final snapshot; a stop that needs SIGKILL is a finding.
            let stop = server.process.stop(signal: SIGTERM, timeout: 60)
            result.serverProblems += server.problemLines()
            if stop.killed || server.process.exitDescription != "exit 0" {
                result.serverProblems.append("SIGTERM: \(server.process.exitDescription)\(stop.killed ? " (needed SIGKILL after 60 s)" : "")")
            }
        }
        if let server = redisServer {
            let stop = server.process.stop(signal: SIGTERM, timeout: 30)
            if stop.killed { result.serverProblems.append("redis-server needed SIGKILL after SIGTERM") }
        }
        if let directory { cleanup.removeDirectory(directory) }
        return result
    }
}
