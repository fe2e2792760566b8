import Synchronization

/// Whether a cluster node answers reads now: not while its replica is known to hold changes the database
/// lost in a failover and is being loaded again (`ReplicaObserver.replicaWithholdsReads`). Reads are then
/// answered `loading`, with the reason, and clients ask again a moment later.
///
/// Looked at on every read: one relaxed atomic load while reads are served.
final class WithheldReads: Sendable {
    private let active = Atomic<Bool>(false)
    private let why = Mutex<String?>(nil)

    /// Why reads are withheld, or `nil` when they are served.
    @inline(__always)
    var reason: String? {
        guard active.load(ordering: .relaxed) else { return nil }
        return why.withLock { $0 }
    }

    func set(_ reason: String?) {
        why.withLock { $0 = reason }
        active.store(reason != nil, ordering: .relaxed)
    }
}
