/// What `entitled-bench restart` measured, as its JSON holds it.
struct RestartReport: Codable {
    let startedAt: String
    let command: [String]
    let machine: MachineInfo
    let users: Int
    let logGrants: Int
    let runs: Int
    let redisVersion: String
    var entitled = RestartMeasurements()
    var redis = RestartMeasurements()

    /// entitled's figure over Redis's (below 1: entitled takes less), when both have one.
    static func ratio(_ entitled: Double?, _ redis: Double?) -> Double? {
        guard let entitled, let redis, redis > 0 else { return nil }
        return entitled / redis
    }
}

/// One server's bulk loads, snapshot and restarts.
struct RestartMeasurements: Codable {
    var load: BulkLoad?
    var snapshotSeconds: Double?
    var snapshotBytes: Int?
    /// Seconds from launch until a check of the last user loaded answered, per restart after kill -9.
    var fromSnapshot: [Double] = []
    var logLoad: BulkLoad?
    /// As `fromSnapshot`, with `logLoad`'s grants in the log after the snapshot.
    var fromSnapshotAndLog: [Double] = []
}

/// Grants of one membership each, sent pipelined.
struct BulkLoad: Codable {
    let grants: Int
    let seconds: Double
    /// User and system time of the server over the load (nil where /proc could not be read).
    let serverCPUSeconds: Double?

    var grantsPerSecond: Double { Double(grants) / max(seconds, 1e-9) }
    var serverCPUMicrosecondsPerGrant: Double? { serverCPUSeconds.map { $0 * 1e6 / Double(max(grants, 1)) } }
}
