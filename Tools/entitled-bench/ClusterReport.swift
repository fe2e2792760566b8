import Foundation

/// What `entitled-bench cluster` measured: every run, and the medians and ratios the README quotes.
struct ClusterReport: Codable {
    var nodes: Int
    var users: Int
    var connections: Int
    var duration: Double
    var runs: Int
    /// Checks per run: "cluster node" (the last node started) and "standalone".
    var checks: [String: [RunResult]] = [:]
    /// Durable grants per run: "cluster" (spread over the nodes), "standalone" (--fsync always), "redis"
    /// (appendfsync always).
    var grants: [String: [RunResult]] = [:]
    /// Each sample's replication lag, µs: from the writer's acknowledgement to the other node's answer, with
    /// no other load.
    var lagMicroseconds: [Double] = []
    /// The same, sampled during the grant runs (the cluster under its full write load).
    var lagUnderLoadMicroseconds: [Double] = []
    var medianChecks: [String: Double] = [:]
    var medianGrants: [String: Double] = [:]
    var lagP50Microseconds = 0.0
    var lagP99Microseconds = 0.0
    var lagUnderLoadP50Microseconds = 0.0
    var lagUnderLoadP99Microseconds = 0.0

    mutating func summarize() {
        medianChecks = checks.mapValues { runs in median(runs.map(\.requestsPerSecond)) }
        medianGrants = grants.mapValues { runs in median(runs.map(\.requestsPerSecond)) }
        (lagP50Microseconds, lagP99Microseconds) = Self.percentiles(lagMicroseconds)
        (lagUnderLoadP50Microseconds, lagUnderLoadP99Microseconds) = Self.percentiles(lagUnderLoadMicroseconds)
    }

    private static func percentiles(_ samples: [Double]) -> (p50: Double, p99: Double) {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return (0, 0) }
        return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))])
    }

    /// The lines the command prints.
    func table() -> String {
        func rate(_ value: Double?) -> String { value.map { String(Int($0)) } ?? "-" }
        func ratio(_ top: Double?, _ bottom: Double?) -> String {
            guard let top, let bottom, bottom > 0 else { return "-" }
            return String(format: "%.2fx", top / bottom)
        }
        func lag(_ what: String, _ samples: [Double], _ p50: Double, _ p99: Double) -> String {
            String(format: "replication lag %@%d samples)   p50 %.0f µs   p99 %.0f µs", what, samples.count, p50, p99)
        }
        let (checks, grants) = (medianChecks, medianGrants)
        return [
            "cluster: \(nodes) nodes on one PostgreSQL, \(users) users, \(connections) connections, \(runs) runs of \(duration) s (medians)",
            "checks/s   one cluster node \(rate(checks["cluster node"]))   standalone \(rate(checks["standalone"]))   "
                + "node/standalone \(ratio(checks["cluster node"], checks["standalone"]))",
            "grants/s   cluster \(rate(grants["cluster"]))   standalone --fsync always \(rate(grants["standalone"]))   "
                + "redis appendfsync always \(rate(grants["redis"]))   cluster/standalone \(ratio(grants["cluster"], grants["standalone"]))   "
                + "cluster/redis \(ratio(grants["cluster"], grants["redis"]))",
            lag("(ack on node 1 until node 2 answers it, ", lagMicroseconds, lagP50Microseconds, lagP99Microseconds),
            lag("under the grant load (", lagUnderLoadMicroseconds, lagUnderLoadP50Microseconds, lagUnderLoadP99Microseconds),
        ].joined(separator: "\n")
    }
}
