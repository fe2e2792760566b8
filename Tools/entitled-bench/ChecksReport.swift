import Histogram

/// Everything `entitled-bench checks` measured, for the table, the JSON file and the chart.
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
    /// Per load, the medians' ratios (entitled over Redis): what the chart shows, spelled out.
    var ratios: [ScenarioRatios] = []
}

/// The settings the numbers were taken with: `generator` is the load generator (`c`: entitled-loadgen).
struct ChecksSettings: Codable {
    var users: Int
    var durationSeconds, warmupSeconds: Double
    var runs: Int
    var distribution: KeyDistribution
    var mix: OperationMix
    var fsync: String
    var generator = "c"
    var entitledBinary, redisServer, redisVersion: String
}

/// entitled over Redis at one load: throughput (above 1, entitled answered more requests per second), server
/// CPU time per request (below 1, entitled spent less), p50 and p99 latency (below 1, entitled answered sooner).
struct ScenarioRatios: Codable {
    var connections, pipeline: Int
    var throughput: Double
    var serverCPUPerRequest: Double?
    var p50, p99: Double

    init(_ scenario: ScenarioResult) {
        (connections, pipeline) = (scenario.connections, scenario.pipeline)
        throughput = scenario.throughputRatio
        serverCPUPerRequest = scenario.serverCPURatio
        let (e, r) = (scenario.entitledMedian, scenario.redisMedian)
        p50 = r.p50Microseconds > 0 ? e.p50Microseconds / r.p50Microseconds : 0
        p99 = r.p99Microseconds > 0 ? e.p99Microseconds / r.p99Microseconds : 0
    }
}

/// One load shape, measured `runs` times against each server.
struct ScenarioResult: Codable {
    var connections, pipeline: Int
    var entitled: [RunResult] = [], redis: [RunResult] = []

    var entitledMedian: RunResult { RunResult.medians(of: entitled) }
    var redisMedian: RunResult { RunResult.medians(of: redis) }
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

/// One measurement of one server. The server's CPU time per answered request over the measured window
/// (from /proc/PID/stat) does not depend on the client's own CPU use; `generatorCores`: what the load
/// generator kept busy meanwhile.
struct RunResult: Codable {
    var requestsPerSecond, p50Microseconds, p99Microseconds, p999Microseconds, maxMicroseconds: Double
    var errors, inactive: Int
    var firstError: String?
    var serverCPUMicrosecondsPerRequest, generatorCores: Double?

    /// Each figure's median over the runs (errors summed).
    static func medians(of runs: [RunResult]) -> RunResult {
        let cpu = runs.compactMap(\.serverCPUMicrosecondsPerRequest), generator = runs.compactMap(\.generatorCores)
        return RunResult(
            requestsPerSecond: median(runs.map(\.requestsPerSecond)), p50Microseconds: median(runs.map(\.p50Microseconds)),
            p99Microseconds: median(runs.map(\.p99Microseconds)), p999Microseconds: median(runs.map(\.p999Microseconds)),
            maxMicroseconds: median(runs.map(\.maxMicroseconds)), errors: runs.map(\.errors).reduce(0, +), inactive: runs.map(\.inactive).reduce(0, +),
            serverCPUMicrosecondsPerRequest: cpu.count == runs.count && !cpu.isEmpty ? median(cpu) : nil,
            generatorCores: generator.count == runs.count && !generator.isEmpty ? median(generator) : nil
        )
    }
}

extension RunResult {
    init(_ outcome: LoadOutcome) {
        let histogram = outcome.histogram
        let microseconds = { (percentile: Double) in Double(histogram.valueAtPercentile(percentile)) / 1000 }
        self.init(
            requestsPerSecond: outcome.requestsPerSecond, p50Microseconds: microseconds(50), p99Microseconds: microseconds(99),
            p999Microseconds: microseconds(99.9), maxMicroseconds: Double(histogram.max) / 1000, errors: outcome.errors, inactive: outcome.inactive,
            firstError: outcome.firstError,
            serverCPUMicrosecondsPerRequest: outcome.serverCPUSeconds.flatMap { outcome.answered > 0 ? $0 * 1e6 / Double(outcome.answered) : nil },
            generatorCores: outcome.generatorCPUSeconds.flatMap { outcome.windowSeconds > 0 ? $0 / outcome.windowSeconds : nil }
        )
    }
}
