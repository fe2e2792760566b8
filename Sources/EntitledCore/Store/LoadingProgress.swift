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
    private let stopping = Atomic<Bool>(false)

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

    /// Asks the load to stop (the process was told to stop while it loads): the loader gives up at its
    /// next step (`isStopRequested`) instead of finishing a load nobody will be served from.
    public func requestStop() {
        stopping.store(true, ordering: .relaxed)
    }

    /// Whether `requestStop()` was called; a loader looks between its steps (a snapshot's decoding, the
    /// building of its indexes, each batch of log records).
    public var isStopRequested: Bool { stopping.load(ordering: .relaxed) }
}
