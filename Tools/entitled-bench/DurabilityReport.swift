/// Everything `entitled-bench durability` measured: written as the JSON file, rendered as the table.
struct DurabilityReport: Codable {
    var tool = "entitled-bench durability"
    var startedAt: String
    var finishedAt: String?
    var command: [String]
    var machine: MachineInfo
    var settings: DurabilitySettings
    var writes: WriteSection?
    var snapshot: SnapshotSection?
    var goals: [Goal] = []
}

/// The settings the numbers were taken with.
struct DurabilitySettings: Codable {
    let durationSeconds, warmupSeconds: Double
    let runs: Int
    let connections: [Int]
    let memberships, logGrants, checkConnections, loadConnections, loadWindow: Int
    let entitledBinary: String
    let redisServer, redisVersion: String?
    let workDirectory: String
}

/// Part 1: durable writes, entitled (`--fsync always`) next to Redis (`appendfsync always`); `redisSkipped`
/// says why Redis was not measured, when it was not.
struct WriteSection: Codable {
    var redisSkipped: String?
    var measurements: [WriteMeasurement] = []
    var ratios: [WriteRatio] = []
    var ceilings: [WriteCeiling] = []
}

/// One system at one concurrency over all runs: `entitled` (grant), `redis` (SADD), or with --ceiling
/// `entitled-nosync` and `redis-nosync`. `median`: over the runs that completed, nil when none did.
struct WriteMeasurement: Codable {
    let system, operation: String
    let connections: Int
    var runs: [WriteRun] = []
    var median: WriteMedian?
}

/// One run of one measurement, on a fresh server and data directory.
struct WriteRun: Codable {
    let run: Int
    var requestsPerSecond = 0.0
    /// Requests answered in the measured window, and those answered with anything but success.
    var requests = 0, errors = 0
    var firstError: String?
    var latency: LatencySummary?
    /// The server's CPU time (user and system, every thread) over the measured window, per request.
    var serverCPUMicrosecondsPerRequest: Double?
    /// Why the run did not complete (the server crashed, stalled, refused to start...).
    var failure: String?
    /// The server's log lines at warning or above, and an unclean stop.
    var serverProblems: [String] = []
    /// Cores that other processes kept busy during the run (above about 0.3 on a 2-core machine the numbers
    /// are disturbed).
    var otherCPUCores: Double?
}

/// A measurement's medians over the runs that completed (`runsCounted`).
struct WriteMedian: Codable {
    let requestsPerSecond, p50Ms, p99Ms: Double
    var serverCPUMicrosecondsPerRequest: Double?
    let runsCounted: Int
}

/// entitled's median rate over Redis's at one concurrency (above 1: entitled wrote faster), and its server
/// CPU per write over Redis's.
struct WriteRatio: Codable {
    let connections: Int
    let entitledOverRedis: Double
    var serverCPUEntitledOverRedis: Double?
}

/// With --ceiling, the most any way of syncing could give: each server's rate with no sync at all over
/// Redis's rate with `appendfsync always`, in the same runs. A durable rate can only be lower than its
/// server's unsynced one, so `entitledUnsyncedOverRedis` bounds `WriteRatio.entitledOverRedis` from above.
struct WriteCeiling: Codable {
    let connections: Int
    let entitledUnsyncedOverRedis, redisUnsyncedOverRedis: Double
}

/// Part 2: snapshot and recovery at scale. `recoveries`: restarts after kill -9 with a snapshot and a log
/// to replay, one per run; `verificationProblems`: anything that did not match what the server acknowledged.
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
    var recoveries: [RestartTiming] = []
    var recoveryMedianSeconds: Double?
    var verificationProblems: [String] = []
    var serverProblems: [String] = []
    var failure: String?
}

/// A pipelined load of grants: how long it took, and the server's resident memory after it.
struct LoadSummary: Codable {
    let grants: Int
    let seconds, grantsPerSecond: Double
    let errors: Int
    let firstError: String?
    let connections, window: Int
    let serverResidentBytes: Int?
}

/// A `{"op":"snapshot"}`: what the server reported, and the wall time the client saw.
struct SnapshotTiming: Codable {
    let serverMs: Int
    let wallMs: Double
    let bytes, memberships, sequence: Int
    let file: String
}

/// Check latency over a window of time on several closed-loop connections: the checks started in the
/// window, per second; the latency of those whose time in flight overlapped it (a check stalled across it
/// counts); the cores other processes used meanwhile.
struct CheckWindow: Codable {
    let windowMs: Double
    let connections: Int
    let checksPerSecond: Double
    let latency: LatencySummary
    let errors, inactive: Int
    let firstError: String?
    let otherCPUCores: Double?
}

/// A graceful stop, from SIGTERM until the process was gone; whether the server logged a snapshot after
/// SIGTERM (it skips one when nothing changed since the last).
struct StopTiming: Codable {
    let seconds: Double
    let exit: String
    let killed, wroteFinalSnapshot: Bool
}

/// One start of entitled on an existing data directory: from launch until the ready line, and the cores
/// other processes used meanwhile.
struct RestartTiming: Codable {
    let secondsToReady: Double
    let recovery: RecoveryLine?
    let otherCPUCores: Double?
}
