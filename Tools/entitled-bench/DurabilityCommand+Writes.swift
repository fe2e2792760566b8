import Foundation

extension DurabilityCommand {
    /// Part 1: durable writes at each concurrency, entitled next to Redis, each run on fresh servers, driven
    /// by `entitled-loadgen`; `redis` nil skips Redis.
    func measureWrites(connections: [Int], entitled: String, redis: String?, redisSkipped: String?, workRoot: String, neutral: NeutralLoad) -> WriteSection {
        let redisBenchmark = compareWithRedisBenchmark ? redis.flatMap { Executables.redisBenchmark(besideRedisServer: $0) } : nil
        var section = WriteSection(redisSkipped: redisSkipped)
        for count in connections {
            var systems = [("entitled", "grant")]
            if redis != nil {
                systems.append(("redis", "SADD"))
                if redisBenchmark != nil { systems.append(("redis-benchmark", "SADD")) }
                if ceiling { systems += [("entitled-nosync", "grant"), ("redis-nosync", "SADD")] }
            }
            section.measurements += systems.map { WriteMeasurement(system: $0.0, operation: $0.1, connections: count) }
        }
        // Runs interleave the systems and concurrencies, so that a slow phase of the machine (another process,
        // the disk's cache) is spread over all of them instead of hitting one.
        for run in 1...runs {
            var lastRedisRate = 0.0
            for index in section.measurements.indices {
                let measurement = section.measurements[index]
                progress("writes run \(run)/\(runs): \(measurement.system) \(measurement.operation), \(measurement.connections) connection(s), \(duration) s")
                let result = measureWrites(
                    measurement.system, connections: measurement.connections, run: run, lastRedisRate: lastRedisRate, entitled: entitled, redis: redis,
                    redisBenchmark: redisBenchmark, workRoot: workRoot, neutral: neutral
                )
                if measurement.system == "redis" { lastRedisRate = result.requestsPerSecond }
                if let failure = result.failure {
                    progress("  failed: \(failure)")
                } else {
                    progress(
                        "  \(Int(result.requestsPerSecond)) req/s, p50 \(Format.fixed(result.p50Ms ?? 0, 3)) ms, p99 \(Format.fixed(result.p99Ms ?? 0, 3)) ms, "
                            + "errors \(result.errors), other processes \(Format.fixed(result.otherCPUCores ?? 0, 2)) cores"
                    )
                }
                section.measurements[index].runs.append(result)
            }
        }
        for index in section.measurements.indices {
            let done = section.measurements[index].runs.filter { $0.failure == nil && $0.requests > 0 }
            guard !done.isEmpty else { continue }
            let cpu = done.compactMap(\.serverCPUMicrosecondsPerRequest)
            section.measurements[index].median = WriteMedian(
                requestsPerSecond: median(done.map(\.requestsPerSecond)), p50Ms: median(done.compactMap(\.p50Ms)),
                p99Ms: median(done.compactMap(\.p99Ms)), serverCPUMicrosecondsPerRequest: cpu.isEmpty ? nil : median(cpu), runsCounted: done.count
            )
        }
        for count in connections {
            let medians = { (system: String) in section.measurements.first { $0.system == system && $0.connections == count }?.median }
            let rate = { (system: String) in medians(system)?.requestsPerSecond }
            if let ours = rate("entitled"), let theirs = rate("redis"), theirs > 0 {
                var ratio = WriteRatio(connections: count, entitledOverRedis: ours / theirs)
                if let ours = medians("entitled")?.serverCPUMicrosecondsPerRequest, let theirs = medians("redis")?.serverCPUMicrosecondsPerRequest, theirs > 0 {
                    ratio.serverCPUEntitledOverRedis = ours / theirs
                }
                section.ratios.append(ratio)
            }
            if let durable = rate("redis"), durable > 0, let ours = rate("entitled-nosync"), let theirs = rate("redis-nosync") {
                section.ceilings.append(WriteCeiling(connections: count, entitledUnsyncedOverRedis: ours / durable, redisUnsyncedOverRedis: theirs / durable))
            }
            if let generator = rate("redis"), let yardstick = rate("redis-benchmark"), yardstick > 0 {
                section.generatorRatios.append(GeneratorRatio(connections: count, generatorOverRedisBenchmark: generator / yardstick))
            }
        }
        return section
    }

    /// One run: a fresh server in a fresh directory, the load (or redis-benchmark), the server stopped, the
    /// directory gone.
    private func measureWrites(
        _ system: String, connections count: Int, run: Int, lastRedisRate: Double, entitled: String, redis: String?, redisBenchmark: String?,
        workRoot: String, neutral: NeutralLoad
    ) -> WriteRun {
        var result = WriteRun(run: run)
        result.settleSeconds = CPUMeter.settle(limit: settle)
        var directory: String?
        var entitledServer: EntitledProcess?
        var redisServer: RedisProcess?
        do {
            let made = try cleanup.makeTemporaryDirectory(in: workRoot, prefix: "\(system)-writes")
            directory = made
            let fsync = system.hasSuffix("-nosync") ? "no" : "always"
            let (target, port, pid): (Target, UInt16, pid_t)
            if system.hasPrefix("entitled") {
                let server = try EntitledProcess.start(binary: entitled, dataDirectory: made, fsync: fsync)
                (entitledServer, target, port, pid) = (server, .entitled, server.port, server.process.pid)
            } else {
                let server = try RedisProcess.start(binary: redis ?? "redis-server", directory: made, appendfsync: fsync)
                (redisServer, target, port, pid) = (server, .redis, server.port, server.process.pid)
            }
            if system == "redis-benchmark", let redisBenchmark {
                // As many requests as the generator's Redis run before answered in `duration` (at least 20,000);
                // keys from a range so wide that nearly every SADD adds (one that adds nothing writes no log).
                let requests = max(20_000, Int(lastRedisRate * duration))
                let measured = try RedisBenchmarkRun(
                    port: port, connections: count, pipeline: 1, requests: requests, keyRange: 100_000_000, command: ["SADD", "ents:__rand_int__", "pro"]
                ).run(binary: redisBenchmark)
                (result.requests, result.requestsPerSecond) = (requests, measured.requestsPerSecond)
                (result.reportedP50Ms, result.reportedP99Ms) = (measured.p50Ms, measured.p99Ms)
            } else {
                let meter = CPUMeter(serverPID: pid)
                defer { result.otherCPUCores = meter.otherCores() }
                let outcome = try neutral.measureNewUsers(port: port, serverPID: pid, target: target, connections: count, warmup: warmup, duration: duration)
                if let seconds = outcome.serverCPUSeconds, outcome.answered > 0 {
                    result.serverCPUMicrosecondsPerRequest = seconds * 1e6 / Double(outcome.answered)
                }
                (result.requests, result.requestsPerSecond) = (outcome.answered, outcome.requestsPerSecond)
                (result.errors, result.firstError) = (outcome.errors, outcome.firstError)
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
        if let server = redisServer, server.process.stop(signal: SIGTERM, timeout: 30).killed {
            result.serverProblems.append("redis-server needed SIGKILL after SIGTERM")
        }
        if let directory { cleanup.removeDirectory(directory) }
        return result
    }
}
