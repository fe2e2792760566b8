import EntitledCluster
import Logging
import ServiceLifecycle

/// Cluster mode's periodic snapshots: every node tries each `interval`, and one writes it (the database's
/// lock decides; a snapshot younger than the interval is not written again). At graceful shutdown the
/// node stops its replica (answering queued writes) after the server has stopped; it writes no final
/// snapshot: the database holds every change, and the other nodes go on.
struct ClusterSnapshotService: Service {
    let log: PostgresReplicatedLog
    let interval: Duration?
    let logger: Logger

    func run() async throws {
        await repeatUntilGracefulShutdown(every: interval) {
            do throws(ClusterError) {
                _ = try await log.snapshotIfDue(interval: interval ?? .seconds(60))
            } catch {
                logger.error("the snapshot failed; the database still holds every change", metadata: ["error": "\(error.message)"])
            }
        }
        await log.shutdown()
    }
}
