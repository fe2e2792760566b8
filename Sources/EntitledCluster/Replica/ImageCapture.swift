import EntitledCore
import NIOConcurrencyHelpers

/// A request for a consistent image of the replica between two groups (a snapshot's), with the group of
/// its newest change: the database must hold that very change for the snapshot to be written.
final class ImageCapture: Sendable {
    private let result = NIOLockedValueBox<(image: StoreImage, anchor: Int64)?>(nil)
    private let done = ConditionLock(value: 0)

    func fulfil(_ image: StoreImage, anchor: Int64) {
        result.withLockedValue { $0 = (image, anchor) }
        done.lock()
        done.unlock(withValue: 1)
    }

    /// Waits up to `timeout` for the replicator to take the image.
    func wait(timeout: Duration) -> (image: StoreImage, anchor: Int64)? {
        guard done.lock(whenValue: 1, timeoutSeconds: ClusterTables.seconds(timeout)) else { return nil }
        done.unlock()
        return result.withLockedValue { $0 }
    }
}
