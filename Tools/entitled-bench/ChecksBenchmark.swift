import Foundation
import Histogram

/// Runs `entitled-bench checks`: starts both servers, loads them, measures every scenario on each.
struct ChecksBenchmark {
    let options: ChecksCommand

    func run() throws -> ChecksReport {
        let (entitledPath, redisPath) = try Executables.servers(entitled: options.entitled, redisServer: options.redisServer)
        let workRoot = try cleanup.makeTemporaryDirectory(
            in: options.workDir.hasSuffix("/") ? String(options.workDir.dropLast()) : options.workDir, prefix: "entitled-bench-checks"
        )
        var report = ChecksReport(
            startedAt: ISO8601DateFormatter().string(from: Date()), command: CommandLine.arguments,
            machine: MachineInfo.current(workDirectory: workRoot),
            settings: ChecksSettings(
                users: options.users, durationSeconds: options.duration, warmupSeconds: options.warmup, runs: options.runs,
                distribution: options.distribution, mix: options.mix, fsync: options.fsync, threads: options.threads,
                generatorSpinMicroseconds: options.generatorSpin, idleConnections: options.idleConnections,
                entitledBinary: entitledPath, redisServer: redisPath, redisVersion: RedisProcess.version(binary: redisPath)
            )
        )

        report.settings.generator = options.generator
        let neutral = try options.generator == .c
            ? NeutralLoad(binary: Executables.loadGenerator(options.loadgen), directory: workRoot) : nil

        let entitledDirectory = workRoot + "/entitled"
        let redisDirectory = workRoot + "/redis"
        try FileManager.default.createDirectory(atPath: redisDirectory, withIntermediateDirectories: true)
        let entitled = try EntitledProcess.start(binary: entitledPath, dataDirectory: entitledDirectory, fsync: options.fsync,
            extraArguments: options.entitledOptions
        )
        defer { entitled.process.stop() }
        let redis = try RedisProcess.start(binary: redisPath, directory: redisDirectory, appendfsync: options.fsync)
        defer { redis.process.stop() }

        try EntitledProcess.defineProEntitlement(port: entitled.port)
        for (target, port) in [(Target.entitled, entitled.port), (.redis, redis.port)] {
            progress("loading \(options.users) users into \(target.rawValue)")
            let started = monotonicNanoseconds()
            let loaded = try LoadEngine.load(port: port, target: target, users: options.users)
            guard loaded.errors == 0 else {
                throw BenchError("loading \(target.rawValue) failed: \(loaded.errors) errors, the first: \(loaded.firstError ?? "?")")
            }
            report.loadSeconds[target.rawValue] = Double(monotonicNanoseconds() - started) / 1e9
        }
        report.residentBytesAfterLoad["entitled"] = entitled.process.residentBytes()
        report.residentBytesAfterLoad["redis"] = redis.process.residentBytes()

        // Held to the end of the measurements: each server serves its load beside them.
        var idle: [TCPConnection] = []
        if options.idleConnections > 0 {
            progress("opening \(options.idleConnections) idle connections to each server")
            try raiseDescriptorLimit(to: 2 * options.idleConnections + 1_024)
            for port in [entitled.port, redis.port] {
                for _ in 0..<options.idleConnections { idle.append(try TCPConnection(port: port)) }
            }
        }
        defer { withExtendedLifetime(idle) {} }

        let connectionCounts = options.connections.isEmpty ? [50, 1] : options.connections
        let pipelines = options.pipelines.isEmpty ? [1, 16] : options.pipelines
        for connections in connectionCounts {
            for pipeline in pipelines where !(connections == 1 && pipeline > 1 && options.pipelines.isEmpty) {
                report.scenarios.append(
                    try measure(
                        connections: connections, pipeline: pipeline, entitled: (entitled.port, entitled.process.pid),
                        redis: (redis.port, redis.process.pid), redisPath: redisPath, neutral: neutral
                    )
                )
            }
        }
        report.ratios = report.scenarios.map(ScenarioRatios.init)
        return report
    }

    private func measure(
        connections: Int, pipeline: Int, entitled: (port: UInt16, pid: pid_t), redis: (port: UInt16, pid: pid_t), redisPath: String,
        neutral: NeutralLoad?
    ) throws -> ScenarioResult {
        let shape = LoadShape(
            connections: connections, pipeline: pipeline, users: options.users, distribution: options.distribution, mix: options.mix
        )
        var result = ScenarioResult(connections: connections, pipeline: pipeline)
        var entitledAll = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        var redisAll = entitledAll
        let redisBenchmarkBinary = options.compareWithRedisBenchmark && options.mix == .checks ? redisBenchmarkBinary(redisPath) : nil
        for run in 1...options.runs {
            // Alternating within each run, so a slow period of the machine touches both servers alike.
            for (target, server) in [(Target.entitled, entitled), (.redis, redis)] {
                let outcome =
                    try neutral?.measure(
                        port: server.port, serverPID: server.pid, target: target, shape: shape, warmup: options.warmup,
                        duration: options.duration, seed: UInt64(run)
                    )
                    ?? LoadEngine.measure(
                        port: server.port, target: target, shape: shape, threads: options.threads,
                        spinMicroseconds: options.generatorSpin, warmup: options.warmup,
                        duration: options.duration, seed: UInt64(run)
                    )
                let measured = RunResult(outcome)
                let cpu = measured.serverCPUMicrosecondsPerRequest.map { String(format: ", server CPU %.2f µs/req", $0) } ?? ""
                progress(
                    "\(connections) conns, pipeline \(pipeline), run \(run)/\(options.runs): \(target.rawValue) "
                        + "\(Int(measured.requestsPerSecond)) req/s, p99 \(Int(measured.p99Microseconds)) µs\(cpu)"
                )
                if target == .entitled {
                    result.entitled.append(measured)
                    entitledAll.add(outcome.histogram)
                } else {
                    result.redis.append(measured)
                    redisAll.add(outcome.histogram)
                }
            }
            // redis-benchmark in every run too, right after the generator drove Redis: Redis's own rate
            // drifts by 10% and more between runs, and a single run compared with a median of five could
            // put either side ahead by that much.
            if let binary = redisBenchmarkBinary {
                let requests = max(100_000, Int(result.redis[result.redis.count - 1].requestsPerSecond * options.duration))
                let rate = try redisBenchmark(binary: binary, port: redis.port, connections: connections, pipeline: pipeline, requests: requests)
                result.redisBenchmarkRuns.append(rate)
            }
        }
        result.entitledSpectrum = PercentilePoint.points(of: entitledAll)
        result.redisSpectrum = PercentilePoint.points(of: redisAll)
        if !result.redisBenchmarkRuns.isEmpty {
            result.redisBenchmarkRequestsPerSecond = median(result.redisBenchmarkRuns)
            result.generatorOverRedisBenchmark = median(
                zip(result.redis, result.redisBenchmarkRuns).map { generator, redisBenchmark in generator.requestsPerSecond / redisBenchmark }
            )
        }
        return result
    }

    /// The `redis-benchmark` beside redis-server, or `nil` (and a note) when there is none.
    private func redisBenchmarkBinary(_ redisPath: String) -> String? {
        guard let binary = RedisBenchmarkRun.binary(besideRedisServer: redisPath) else {
            progress("no redis-benchmark found: --validate skipped")
            return nil
        }
        return binary
    }

    /// `redis-benchmark` with the same command, connections, pipeline and key range; its requests per second.
    private func redisBenchmark(binary: String, port: UInt16, connections: Int, pipeline: Int, requests: Int) throws -> Double {
        let result = try RedisBenchmarkRun(
            port: port, connections: connections, pipeline: pipeline, requests: requests, keyRange: options.users,
            threads: options.threads, command: ["SISMEMBER", "ents:__rand_int__", "pro"]
        ).run(binary: binary)
        progress("redis-benchmark \(connections) conns, pipeline \(pipeline): \(Int(result.requestsPerSecond)) req/s")
        return result.requestsPerSecond
    }
}
