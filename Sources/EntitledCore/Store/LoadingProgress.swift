import Synchronization

/// How far a start has come in loading the store: memberships loaded so far, of how many are known to
/// come. Written by the threads that load (a snapshot's decoding, the log's replay), read by whatever
/// answers clients meanwhile; every count is a relaxed atomic, as it is only ever a report.
///
/// `total` grows as the sources are opened: the snapshot's membership count first, then the creations
/// each log segment holds, so `loaded` never passes it but may reach it before the log is read.
public final class LoadingProgress: Sendable {
    private let loadedCount = Atomic<Int>(0)
    private let totalCount = Atomic<Int>(0)

    public init() {}

    /// Memberships loaded so far.
    public var loaded: Int { loadedCount.load(ordering: .relaxed) }
    /// Memberships known to come.
    public var total: Int { totalCount.load(ordering: .relaxed) }

    /// `count` more memberships are known to come.
    public func expect(_ count: Int) {
        totalCount.add(count, ordering: .relaxed)
    }

    /// `count` more memberships are loaded.
    public func advance(by count: Int) {
        loadedCount.add(count, ordering: .relaxed)
    }
}
