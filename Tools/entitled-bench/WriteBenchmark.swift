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
    /// With a path, each run also measures redis-benchmark's SADD on a fresh Redis: the yardstick for the
    /// load generator, which must drive Redis at least as fast.
    let redisBenchmark: String?
    /// The c generator; `nil` drives the servers with this tool's own (Swift) generator.
    let neutral: NeutralLoad?
    /// Also measures both servers with no sync at all (`WriteCeiling`).
    var ceiling = false

    func run() -> WriteSection {
        var section = WriteSection(redisSkipped: redisSkipped)
        for count in connections {
            section.measurements.append(WriteMeasurement(system: "entitled", operation: "grant", connections: count))
            if redis != nil {
                section.measurements.append(WriteMeasurement(system: "redis", operation: "SADD", connections: count))
            }
            if redis != nil, redisBenchmark != nil {
                section.measurements.append(WriteMeasurement(system: "redis-benchmark", operation: "SADD", connections: count))
            }
            if ceiling, redis != nil {
                section.measurements.append(WriteMeasurement(system: "entitled-nosync", operation: "grant", connections: count))
                section.measurements.append(WriteMeasurement(system: "redis-nosync", operation: "SADD", connections: count))
            }
        }
        // Runs interleave the systems and concurrencies, so a slow phase of the machine (another
        // process, the disk's cache) is spread over all of them instead of hitting one.
        for run in 1...runs {
            var lastRedisRate = 0.0
            for index in section.measurements.indices {
                let measurement = section.measurements[index]
                progress(
                    "writes run \(run)/\(runs): \(measurement.system) \(measurement.operation), \(measurement.connections) connection(s), \(duration) s"
                )
                let result = measure(measurement.system, connections: measurement.connections, run: run, lastRedisRate: lastRedisRate)
                if measurement.system == "redis" { lastRedisRate = result.requestsPerSecond }
                if let failure = result.failure { progress("  failed: \(failure)") } else {
                    progress(
                        "  \(Int(result.requestsPerSecond)) req/s, p50 \(ReportTable.format(result.p50Ms ?? 0, 3)) ms, p99 \(ReportTable.format(result.p99Ms ?? 0, 3)) ms, errors \(result.errors), other processes \(ReportTable.format(result.otherCPUCores ?? 0, 2)) cores"
                    )
                }
                section.measurements[index].runs.append(result)
            }
        }
        for index in section.measurements.indices {
            let done = section.measurements[index].runs.filter { $0.failure == nil && $0.requests > 0 }
            guard !done.isEmpty else { continue }
            section.measurements[index].median = WriteMedian(
                requestsPerSecond: median(done.map(\.requestsPerSecond)),
                p50Ms: median(done.compactMap(\.p50Ms)),
                p99Ms: median(done.compactMap(\.p99Ms)),
                serverCPUMicrosecondsPerRequest: done.compactMap(\.serverCPUMicrosecondsPerRequest).isEmpty
                    ? nil : median(done.compactMap(\.serverCPUMicrosecondsPerRequest)),
                runsCounted: done.count
            )
        }
        for count in connections {
            let rate = { (system: String) in
                section.measurements.first { $0.system == system && $0.connections == count }?.median?.requestsPerSecond
            }
            if let ours = rate("entitled"), let theirs = rate("redis"), theirs > 0 {
                let cpu = { (system: String) in
                    section.measurements.first { $0.system == system && $0.connections == count }?.median?.serverCPUMicrosecondsPerRequest
                }
                var ratio = WriteRatio(connections: count, entitledOverRedis: ours / theirs)
                if let ours = cpu("entitled"), let theirs = cpu("redis"), theirs > 0 { ratio.serverCPUEntitledOverRedis = ours / theirs }
                section.ratios.append(ratio)
            }
            if let durable = rate("redis"), durable > 0, let ours = rate("entitled-nosync"), let theirs = rate("redis-nosync") {
                section.ceilings.append(
                    WriteCeiling(connections: count, entitledUnsyncedOverRedis: ours / durable, redisUnsyncedOverRedis: theirs / durable)
                )
            }
            if let generator = rate("redis"), let yardstick = rate("redis-benchmark"), yardstick > 0 {
                section.generatorRatios.append(GeneratorRatio(connections: count, generatorOverRedisBenchmark: generator / yardstick))
            }
        }
        return section
    }

    /// One run: a fresh server in a fresh directory, the closed loop (or redis-benchmark), the server stopped,
    /// the directory gone.
    private func measure(_ system: String, connections count: Int, run: Int, lastRedisRate: Double) -> WriteRun {
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
            let target: Target
            let synced = !system.hasSuffix("-nosync")
            if system.hasPrefix("entitled") {
                let server = try EntitledProcess.start(binary: entitled, dataDirectory: made, fsync: synced ? "always" : "no")
                entitledServer = server
                port = server.port
                target = .entitled
            } else {
                let server = try RedisProcess.start(binary: redis ?? "redis-server", directory: made, appendfsync: synced ? "always" : "no")
                redisServer = server
                port = server.port
                target = .redis
            }
            if system == "redis-benchmark", let redisBenchmark {
                // As many requests as the generator's Redis run before it answered in `duration` (at least
                // 20,000); keys from a range so wide that nearly every SADD adds (one that adds nothing
                // writes no log).
                let requests = max(20_000, Int(lastRedisRate * duration))
                let measured = try RedisBenchmarkRun(
                    port: port, connections: count, pipeline: 1, requests: requests, keyRange: 100_000_000, threads: 1,
                    command: ["SADD", "ents:__rand_int__", "pro"]
                ).run(binary: redisBenchmark)
                result.requests = requests
                result.requestsPerSecond = measured.requestsPerSecond
                result.reportedP50Ms = measured.p50Ms
                result.reportedP99Ms = measured.p99Ms
            } else {
                let serverPID = entitledServer?.process.pid ?? redisServer?.process.pid
                let meter = CPUMeter(serverPID: serverPID)
                defer { result.otherCPUCores = meter.otherCores() }
                let outcome: LoadOutcome
                if let neutral, let serverPID {
                    outcome = try neutral.measureNewUsers(
                        port: port, serverPID: serverPID, target: target, connections: count, warmup: warmup, duration: duration
                    )
                    if let seconds = outcome.serverCPUSeconds, outcome.answered > 0 {
                        result.serverCPUMicrosecondsPerRequest = seconds * 1e6 / Double(outcome.answered)
                    }
                } else {
                    outcome = try LoadEngine.measureNewUsers(
                        port: port, target: target, connections: count, warmup: warmup, duration: duration
                    )
                }
                result.requests = outcome.answered
                result.requestsPerSecond = outcome.requestsPerSecond
                result.errors = outcome.errors
                result.firstError = outcome.firstError
                result.latency = LatencySummary(histogram: outcome.histogram)
            }
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
