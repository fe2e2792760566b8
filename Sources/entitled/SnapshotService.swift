import EntitledStorage
import Logging
import ServiceLifecycle

/// Writes a snapshot every `interval` (when something changed) and a final one at graceful shutdown,
/// then closes the log and releases the data directory.
///
/// Listed before the server in the service group: services stop in reverse order, so the server stops
/// taking requests before the final snapshot is written.
struct SnapshotService: Service {
    let durable: DurableStore
    /// `nil` turns periodic snapshots off (the final one is still written).
    let interval: Duration?
    let logger: Logger

    func run() async throws {
        await repeatUntilGracefulShutdown(every: interval) { await snapshot(final: false) }
        await snapshot(final: true)
        durable.close()
    }

    /// Runs a snapshot off the cooperative thread pool: writing a large state takes a while.
    private func snapshot(final: Bool) async {
        let durable = self.durable
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<SnapshotReport?, StorageError>, Never>) in
            DetachedThread.start(name: "entitled-snapshot") {
                continuation.resume(returning: Result { () throws(StorageError) in try durable.snapshotIfChanged() })
            }
        }
        switch result {
        case .success(nil):
            logger.debug("no snapshot needed: nothing changed since the last one")
        case .success:
            if final { logger.info("final snapshot written") }
        case .failure(let error):
            logger.error("the snapshot failed; the log still holds every change", metadata: ["error": "\(error.message)"])
        }
    }
}
