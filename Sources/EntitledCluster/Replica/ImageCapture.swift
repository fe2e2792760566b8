import EntitledCore
import NIOConcurrencyHelpers

/// A request for a consistent image of the replica between two groups (a snapshot's).
final class ImageCapture: Sendable {
    private let result = NIOLockedValueBox<StoreImage?>(nil)
    private let done = ConditionLock(value: 0)

    func fulfil(_ image: StoreImage) {
        result.withLockedValue { $0 = image }
        done.lock()
        done.unlock(withValue: 1)
    }

    /// Waits up to `timeout` for the replicator to take the image.
    func wait(timeout: Duration) -> StoreImage? {
        guard done.lock(whenValue: 1, timeoutSeconds: ClusterTables.seconds(timeout)) else { return nil }
        done.unlock()
        return result.withLockedValue { $0 }
    }
}
