/// Everything one benchmark run measured: written as the JSON file, and rendered as the table.
struct BenchReport: Codable {
    var tool = "entitled-bench durability"
    var startedAt: String
    var finishedAt: String?
    var command: [String]
    var machine: MachineInfo
    var settings: BenchSettings
    var writes: WriteSection?
    var snapshot: SnapshotSection?
    var goals: [Goal] = []
}

/// The settings the numbers were taken with.
struct BenchSettings: Codable {
    let durationSeconds: Double
    let warmupSeconds: Double
    let runs: Int
    let connections: [Int]
    let memberships: Int
    let logGrants: Int
    let checkConnections: Int
    let loadConnections: Int
    let loadWindow: Int
    /// The longest wait for a quiet machine before each timed step.
    let settleSeconds: Double
    let entitledBinary: String
    let redisServer: String?
    let redisVersion: String?
    let workDirectory: String
}

// MARK: Durable writes

/// Part 1: durable writes, entitled (`--fsync always`) next to Redis (`appendfsync always`).
struct WriteSection: Codable {
    /// Why Redis was not measured, when it was not.
    var redisSkipped: String?
    var measurements: [WriteMeasurement] = []
    var ratios: [WriteRatio] = []
    /// The load generator's Redis rate over redis-benchmark's (with --validate): at least 1 means the
    /// generator is not what limits the numbers.
    var generatorRatios: [GeneratorRatio] = []
    /// With --ceiling: what both servers do with no sync at all, over Redis's durable rate.
    var ceilings: [WriteCeiling] = []
}

/// The most any way of syncing could give (with --ceiling): each server's rate with no sync at all
/// (entitled `--fsync no`, Redis `appendfsync no`) over Redis's rate with `appendfsync always`, measured
/// in the same runs. A durable rate can only be lower than its server's unsynced rate, so
/// `entitledUnsyncedOverRedis` bounds `WriteRatio.entitledOverRedis` from above.
struct WriteCeiling: Codable {
    let connections: Int
    let entitledUnsyncedOverRedis: Double
    let redisUnsyncedOverRedis: Double
}

/// One system at one concurrency, over all runs.
struct WriteMeasurement: Codable {
    /// `entitled`, `redis` (both driven by this tool's load generator), `redis-benchmark` (Redis driven
    /// by redis-benchmark), or with --ceiling `entitled-nosync` and `redis-nosync` (no sync at all).
    let system: String
    /// `grant` or `SADD`.
    let operation: String
    let connections: Int
    var runs: [WriteRun] = []
    /// Medians over the runs that completed; nil when none did.
    var median: WriteMedian?
}

/// One run of one measurement, on a fresh server and data directory.
struct WriteRun: Codable {
    let run: Int
    var requestsPerSecond = 0.0
    /// Requests started in the measured window (warm-up excluded).
    var requests = 0
    /// Answers in the window that were not success.
    var errors = 0
    var firstError: String?
    var latency: LatencySummary?
    /// The server's CPU time (user and system, every thread) over the measured window, per request:
    /// read only with the c generator.
    var serverCPUMicrosecondsPerRequest: Double?
    /// p50 and p99 as redis-benchmark reported them: its runs have no `latency`.
    var reportedP50Ms: Double?
    var reportedP99Ms: Double?
    /// Why the run did not complete (the server crashed, stalled, refused to start...).
    var failure: String?
    /// The server's log lines at warning or above, and an unclean stop.
    var serverProblems: [String] = []
    /// Cores that processes other than the benchmark and its server kept busy during the run: above
    /// about 0.3 on this 2-core machine the numbers are disturbed.
    var otherCPUCores: Double?
    /// How long the run waited for the machine to become quiet before it started.
    var settleSeconds: Double?
}

extension WriteRun {
    var p50Ms: Double? { latency?.p50Ms ?? reportedP50Ms }
    var p99Ms: Double? { latency?.p99Ms ?? reportedP99Ms }
}

/// The medians of one measurement over its completed runs.
struct WriteMedian: Codable {
    let requestsPerSecond: Double
    let p50Ms: Double
    let p99Ms: Double
    var serverCPUMicrosecondsPerRequest: Double?
    let runsCounted: Int
}

/// The load generator's median Redis rate over redis-benchmark's at one concurrency.
struct GeneratorRatio: Codable {
    let connections: Int
    let generatorOverRedisBenchmark: Double
}

/// entitled's median rate over Redis's at one concurrency; above 1 means entitled wrote faster.
struct WriteRatio: Codable {
    let connections: Int
    let entitledOverRedis: Double
    /// entitled's server CPU per write over Redis's (c generator only).
    var serverCPUEntitledOverRedis: Double?
}

// MARK: Snapshot and recovery

/// Part 2: snapshot and recovery at scale.
struct SnapshotSection: Codable {
    var memberships: Int
    var load: LoadSummary?
    var firstSnapshot: SnapshotTiming?
    var checksWithoutSnapshot: CheckWindow?
    var secondSnapshot: SnapshotTiming?
    var checksDuringSnapshot: CheckWindow?
    var gracefulStop: StopTiming?
    var restartFromSnapshot: RestartTiming?
    var logLoad: LoadSummary?
    /// Restarts after kill -9 with a snapshot and a log to replay; one per run.
    var recoveries: [RestartTiming] = []
    var recoveryMedianSeconds: Double?
    /// Anything that did not match what the server acknowledged (lost or extra data).
    var verificationProblems: [String] = []
    var serverProblems: [String] = []
    var failure: String?
}

/// A pipelined load of grants: how long it took and what it left the server at.
struct LoadSummary: Codable {
    let grants: Int
    let seconds: Double
    let grantsPerSecond: Double
    let errors: Int
    let firstError: String?
    let connections: Int
    let window: Int
    /// The server's resident memory after the load.
    let serverResidentBytes: Int?
}

/// A `{"op":"snapshot"}`: what the server reported and the wall time the client saw.
struct SnapshotTiming: Codable {
    let serverMs: Int
    let wallMs: Double
    let bytes: Int
    let memberships: Int
    let sequence: Int
    let file: String
}

/// Check latency over a window of time, on several closed-loop connections.
struct CheckWindow: Codable {
    let windowMs: Double
    let connections: Int
    /// Checks started in the window, per second.
    let checksPerSecond: Double
    /// Checks whose time in flight overlapped the window (a check stalled across it counts).
    let latency: LatencySummary
    let errors: Int
    let inactive: Int
    let firstError: String?
    /// Cores used by other processes during the window (see `WriteRun.otherCPUCores`).
    let otherCPUCores: Double?
}

/// A graceful stop: from SIGTERM until the process was gone.
struct StopTiming: Codable {
    let seconds: Double
    let exit: String
    let killed: Bool
    /// Whether the server logged a snapshot after SIGTERM (it skips one when nothing changed since the last).
    let wroteFinalSnapshot: Bool
}

/// One start of entitled on an existing data directory.
struct RestartTiming: Codable {
    /// From process launch until the ready line arrived.
    let secondsToReady: Double
    let recovery: RecoveryLine?
    /// Cores used by other processes from launch to ready (see `WriteRun.otherCPUCores`).
    let otherCPUCores: Double?
}

// MARK: Goals

/// A goal of the issue and whether this run met it.
struct Goal: Codable {
    let name: String
    let target: String
    let measured: String
    /// nil when it could not be measured.
    let met: Bool?
}
