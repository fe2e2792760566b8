import Atomics

/// How far the log has got, readable without its lock: the newest change recorded (in memory from then
/// on, visible to every read) and the newest acknowledged (synced with `--fsync always`). While the first
/// is ahead, a read may have seen a change that a crash could still lose; a server that holds such
/// answers (`--unsynced-reads hold`) asks here, for each read, with two atomic loads.
public final class LogProgress: Sendable {
    private let recordedSequence = ManagedAtomic<UInt64>(0)
    private let acknowledgedSequence = ManagedAtomic<UInt64>(0)

    public init() {}

    /// The newest change recorded.
    public var recorded: UInt64 { recordedSequence.load(ordering: .acquiring) }
    /// The newest change acknowledged.
    public var acknowledged: UInt64 { acknowledgedSequence.load(ordering: .acquiring) }

    /// The newest change a read may have seen that is not acknowledged yet, or `nil` when every change
    /// recorded is.
    @inline(__always)
    public var unacknowledged: UInt64? {
        // Acknowledged first: a read whose store saw change N found N recorded before it took effect.
        let acknowledged = self.acknowledged
        let recorded = self.recorded
        return recorded > acknowledged ? recorded : nil
    }

    func noteRecorded(_ sequence: UInt64) { recordedSequence.store(sequence, ordering: .releasing) }
    func noteAcknowledged(_ sequence: UInt64) { acknowledgedSequence.store(sequence, ordering: .releasing) }
}
