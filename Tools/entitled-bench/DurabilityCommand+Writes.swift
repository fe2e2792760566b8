import Foundation

extension DurabilityCommand {
    /// Part 1: durable writes at each concurrency, entitled next to Redis, each run on fresh servers, driven
    /// by `entitled-loadgen`; `redis` nil skips Redis.
    func measureWrites(connections: [Int], entitled: String, redis: String?, redisSkipped: String?, workRoot: String, neutral: NeutralLoad) -> WriteSection {
        var section = WriteSection(redisSkipped: redisSkipped)
        var systems = [("entitled", "grant")]
        if redis != nil { systems += [("redis", "SADD")] + (ceiling ? [("entitled-nosync", "grant"), ("redis-nosync", "SADD")] : []) }
        for count in connections {
            section.measurements += systems.map { WriteMeasurement(system: $0.0, operation: $0.1, connections: count) }
        }
        // Runs interleave the systems and concurrencies, so that a slow phase of the machine (another process,
        // the disk's cache) is spread over all of them instead of hitting one.
        for run in 1...runs {
            for index in section.measurements.indices {
                let measurement = section.measurements[index]
                progress("writes run \(run)/\(runs): \(measurement.system) \(measurement.operation), \(measurement.connections) connection(s), \(duration) s")
                let result = measureWrites(measurement.system, connections: measurement.connections, run: run, entitled: entitled, redis: redis, workRoot: workRoot, neutral: neutral)
                if let failure = result.failure {
                    progress("  failed: \(failure)")
                } else {
                    progress(
                        "  \(Int(result.requestsPerSecond)) req/s, p50 \(Format.fixed(result.latency?.p50Ms ?? 0, 3)) ms, p99 \(Format.fixed(result.latency?.p99Ms ?? 0, 3)) ms, "
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
                requestsPerSecond: median(done.map(\.requestsPerSecond)), p50Ms: median(done.compactMap(\.latency?.p50Ms)),
                p99Ms: median(done.compactMap(\.latency?.p99Ms)), serverCPUMicrosecondsPerRequest: cpu.isEmpty ? nil : median(cpu), runsCounted: done.count
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
        }
        return section
    }

    /// One run: a fresh server in a fresh directory, the load, the server stopped, the directory gone.
    private func measureWrites(_ system: String, connections count: Int, run: Int, entitled: String, redis: String?, workRoot: String, neutral: NeutralLoad) -> WriteRun {
        var result = WriteRun(run: run)
        var directory: String?
        var server: Server?
        do {
            let made = try cleanup.makeTemporaryDirectory(in: workRoot, prefix: "\(system)-writes")
            directory = made
            let fsync = system.hasSuffix("-nosync") ? "no" : "always"
            let started =
                try system.hasPrefix("entitled")
                ? Server.entitled(entitled, dataDirectory: made, fsync: fsync) : Server.redis(redis ?? "redis-server", directory: made, appendfsync: fsync)
            server = started
            let meter = CPUMeter(serverPID: started.pid)
            defer { result.otherCPUCores = meter.otherCores() }
            let outcome = try neutral.measureNewUsers(started, connections: count, warmup: warmup, duration: duration)
            if let seconds = outcome.serverCPUSeconds, outcome.answered > 0 {
                result.serverCPUMicrosecondsPerRequest = seconds * 1e6 / Double(outcome.answered)
            }
            (result.requests, result.requestsPerSecond) = (outcome.answered, outcome.requestsPerSecond)
            (result.errors, result.firstError) = (outcome.errors, outcome.firstError)
            result.latency = LatencySummary(histogram: outcome.histogram)
        } catch {
            result.failure = "\(error)"
        }
        if let server, server.target == .entitled {
            // Graceful: entitled writes a final snapshot; a stop that needs SIGKILL is a finding.
            let stop = server.process.stop(signal: SIGTERM, timeout: 60)
            result.serverProblems += server.problemLines()
            if stop.killed || server.process.exitDescription != "exit 0" {
                result.serverProblems.append("SIGTERM: \(server.process.exitDescription)\(stop.killed ? " (needed SIGKILL after 60 s)" : "")")
            }
        } else if let server, server.process.stop(signal: SIGTERM, timeout: 30).killed {
            result.serverProblems.append("redis-server needed SIGKILL after SIGTERM")
        }
        if let directory { cleanup.removeDirectory(directory) }
        return result
    }
}
