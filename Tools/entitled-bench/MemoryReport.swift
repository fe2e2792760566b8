/// Everything `entitled-bench memory` measured, for the table and the JSON file.
struct MemoryReport: Codable {
    var tool = "entitled-bench memory"
    var startedAt: String
    var command: [String]
    var machine: MachineInfo
    var settings: MemorySettings
    var entitled, redis: ServerMemory
    /// Redis's own count of the bytes it allocated (`INFO memory` used_memory), after the load, and per user.
    var redisUsedMemoryBytes: Int?
    var redisUsedMemoryBytesPerUser: Double?
    /// A few fields of Redis's `INFO memory` after the load.
    var redisMemoryInfo: [String: String]
    /// What the goal compares, entitled's growth per user over Redis's; the same for the whole resident
    /// memory after the load; and whether entitled needs at most `goalRatio` of Redis's growth per user.
    var growthRatio = 0.0, residentRatio = 0.0
    var goalMet = false

    static let goalRatio = 0.8

    /// Fills in the ratios and the verdict from the two servers' figures.
    mutating func judge() {
        growthRatio = redis.growthBytesPerUser > 0 ? entitled.growthBytesPerUser / redis.growthBytesPerUser : 0
        residentRatio = redis.residentBytesPerUser > 0 ? entitled.residentBytesPerUser / redis.residentBytesPerUser : 0
        goalMet = entitled.growthBytesPerUser <= Self.goalRatio * redis.growthBytesPerUser
    }
}

struct MemorySettings: Codable {
    var users, connections, pipeline: Int
    var fsync: String
    /// The expiry of every membership (entitled's expiresAt; Redis's expires_at holds the same instant).
    var expiresAt: String
    var entitledBinary: String
    var entitledOptions: [String]
    var redisServer, redisVersion: String
}

/// One server's resident memory (VmRSS) before and after the load.
struct ServerMemory: Codable {
    var residentBytesBefore, residentBytesAfter: Int
    /// VmHWM after the load: the most it was resident at any moment.
    var peakResidentBytes: Int?
    var loadSeconds: Double
    /// (after − before) / users: what one more user holding one membership costs, the figure the goal uses;
    /// and after / users: the whole process, its empty size included.
    var growthBytesPerUser, residentBytesPerUser: Double

    init(residentBytesBefore: Int, residentBytesAfter: Int, peakResidentBytes: Int?, loadSeconds: Double, users: Double) {
        (self.residentBytesBefore, self.residentBytesAfter, self.peakResidentBytes) = (residentBytesBefore, residentBytesAfter, peakResidentBytes)
        self.loadSeconds = loadSeconds
        growthBytesPerUser = Double(residentBytesAfter - residentBytesBefore) / users
        residentBytesPerUser = Double(residentBytesAfter) / users
    }
}
