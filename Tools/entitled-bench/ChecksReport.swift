import Histogram

/// Everything `entitled-bench checks` measured, for the table, the JSON file and the plot.
struct ChecksReport: Codable {
    var tool = "entitled-bench checks"
    var startedAt: String
    var command: [String]
    var machine: MachineInfo
    var settings: ChecksSettings
    /// Seconds each server took to load the users.
    var loadSeconds: [String: Double] = [:]
    /// Resident memory of each server after loading, in bytes.
    var residentBytesAfterLoad: [String: Int] = [:]
    var scenarios: [ScenarioResult] = []
    /// Per load, the medians' ratios (entitled over Redis): what the chart shows, spelled out for readers of
    /// the JSON file.
    var ratios: [ScenarioRatios] = []
}

/// entitled over Redis at one load.
struct ScenarioRatios: Codable {
    var connections: Int
    var pipeline: Int
    /// Throughput: above 1, entitled answered more requests per second.
    var throughput: Double
    /// Server CPU time per request: below 1, entitled spent less.
    var serverCPUPerRequest: Double?
    /// p50 and p99 latency: below 1, entitled answered sooner.
    var p50: Double
    var p99: Double

    init(_ scenario: ScenarioResult) {
        connections = scenario.connections
        pipeline = scenario.pipeline
        throughput = scenario.throughputRatio
        serverCPUPerRequest = scenario.serverCPURatio
        let (e, r) = (scenario.entitledMedian, scenario.redisMedian)
        p50 = r.p50Microseconds > 0 ? e.p50Microseconds / r.p50Microseconds : 0
        p99 = r.p99Microseconds > 0 ? e.p99Microseconds / r.p99Microseconds : 0
    }
}

struct ChecksSettings: Codable {
    var users: Int
    var durationSeconds: Double
    var warmupSeconds: Double
    var runs: Int
    var distribution: KeyDistribution
    var mix: OperationMix
    var fsync: String
    /// Which load generator drove both servers (`c` when absent: reports written before there was a choice
    /// used the swift one).
    var generator: GeneratorKind? = nil
    var threads: Int
    /// How long the generator polls for answers before it sleeps (`--generator-spin`).
    var generatorSpinMicroseconds: Int
    /// Connections opened to each server before the measurements and held, silent, through them.
    var idleConnections: Int? = nil
    var entitledBinary: String
    var redisServer: String
    var redisVersion: String
}

/// The load generator a run used.
enum GeneratorKind: String, Codable, CaseIterable, Sendable {
    /// `entitled-loadgen`: one thread, epoll, no spinning, request bytes made in advance.
    case c
    /// This tool's own generator (`LoadEngine`): several threads, a polling client.
    case swift
}

/// One load shape, measured `runs` times against each server.
struct ScenarioResult: Codable {
    var connections: Int
    var pipeline: Int
    var entitled: [RunResult] = []
    var redis: [RunResult] = []
    /// The latency distribution of every run of each server together: points for the plot.
    var entitledSpectrum: [PercentilePoint] = []
    var redisSpectrum: [PercentilePoint] = []
    /// redis-benchmark's throughput with the same connections, pipeline and keys (with --validate): the
    /// median of `redisBenchmarkRuns`, one per run, each right after the generator's run against Redis.
    var redisBenchmarkRequestsPerSecond: Double?
    var redisBenchmarkRuns: [Double] = []
    /// The generator's Redis rate over redis-benchmark's, run by run (each pair measured back to back),
    /// and the median of those ratios: the paired comparison, which the drift of Redis's own rate between
    /// runs does not blur as it blurs the two medians.
    var generatorOverRedisBenchmark: Double?

    var entitledMedian: RunResult { RunResult.medians(of: entitled) }
    var redisMedian: RunResult { RunResult.medians(of: redis) }
    /// entitled's median throughput over Redis's.
    var throughputRatio: Double {
        redisMedian.requestsPerSecond > 0 ? entitledMedian.requestsPerSecond / redisMedian.requestsPerSecond : 0
    }
    /// entitled's median server CPU per request over Redis's (below 1: entitled is cheaper), when both were read.
    var serverCPURatio: Double? {
        guard let ours = entitledMedian.serverCPUMicrosecondsPerRequest, let theirs = redisMedian.serverCPUMicrosecondsPerRequest, theirs > 0 else {
            return nil
        }
        return ours / theirs
    }
}

/// One measurement of one server.
struct RunResult: Codable {
    var requestsPerSecond: Double
    var p50Microseconds: Double
    var p99Microseconds: Double
    var p999Microseconds: Double
    var maxMicroseconds: Double
    var errors: Int
    var inactive: Int
    var firstError: String?
    /// The server's CPU time per answered request over the measured window, in microseconds (read from
    /// /proc/PID/stat): what does not depend on the client's own CPU use.
    var serverCPUMicrosecondsPerRequest: Double?
    /// Cores the load generator kept busy over the window (the C generator only).
    var generatorCores: Double?

    init(_ outcome: LoadOutcome) {
        let histogram = outcome.histogram
        requestsPerSecond = outcome.requestsPerSecond
        p50Microseconds = Double(histogram.valueAtPercentile(50)) / 1000
        p99Microseconds = Double(histogram.valueAtPercentile(99)) / 1000
        p999Microseconds = Double(histogram.valueAtPercentile(99.9)) / 1000
        maxMicroseconds = Double(histogram.max) / 1000
        errors = outcome.errors
        inactive = outcome.inactive
        firstError = outcome.firstError
        if let cpu = outcome.serverCPUSeconds, outcome.answered > 0 { serverCPUMicrosecondsPerRequest = cpu * 1e6 / Double(outcome.answered) }
        if let cpu = outcome.generatorCPUSeconds, outcome.windowSeconds > 0 { generatorCores = cpu / outcome.windowSeconds }
    }

    private init(requestsPerSecond: Double, p50: Double, p99: Double, p999: Double, max: Double, errors: Int, inactive: Int) {
        self.requestsPerSecond = requestsPerSecond
        p50Microseconds = p50
        p99Microseconds = p99
        p999Microseconds = p999
        maxMicroseconds = max
        self.errors = errors
        self.inactive = inactive
    }

    /// Each figure's median over the runs (errors summed).
    static func medians(of runs: [RunResult]) -> RunResult {
        var result = RunResult(
            requestsPerSecond: median(runs.map(\.requestsPerSecond)),
            p50: median(runs.map(\.p50Microseconds)),
            p99: median(runs.map(\.p99Microseconds)),
            p999: median(runs.map(\.p999Microseconds)),
            max: median(runs.map(\.maxMicroseconds)),
            errors: runs.map(\.errors).reduce(0, +),
            inactive: runs.map(\.inactive).reduce(0, +)
        )
        let cpu = runs.compactMap(\.serverCPUMicrosecondsPerRequest)
        if cpu.count == runs.count, !cpu.isEmpty { result.serverCPUMicrosecondsPerRequest = median(cpu) }
        let generator = runs.compactMap(\.generatorCores)
        if generator.count == runs.count, !generator.isEmpty { result.generatorCores = median(generator) }
        return result
    }
}

/// A point of a latency distribution: the latency below which `percentile` percent of requests were.
struct PercentilePoint: Codable {
    var percentile: Double
    var microseconds: Double

    /// The classic HdrHistogram percentile spectrum: denser towards the tail.
    static let spectrum: [Double] = [0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999]

    static func points(of histogram: Histogram<UInt64>) -> [PercentilePoint] {
        spectrum.map { PercentilePoint(percentile: $0, microseconds: Double(histogram.valueAtPercentile($0)) / 1000) }
    }
}
