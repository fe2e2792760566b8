/// How the log's group commit has gone since the start: how many changes each write-and-sync carried,
/// how long the syncs took, and how long changes waited for theirs. For operators (`stats`, metrics):
/// groups of one mean writes arrive one at a time (each pays a whole sync); long waits with large groups
/// mean the disk is what limits durable writes.
public struct GroupCommitStatistics: Sendable, Hashable {
    /// Batches that acknowledged changes (one write, and with `FsyncPolicy.always` one `fdatasync`, each).
    public var groups = 0
    /// Changes those batches acknowledged.
    public var changes = 0
    /// The most changes one batch acknowledged.
    public var largestGroup = 0
    /// Time spent in acknowledging syncs, in total and the longest one.
    public var syncNanoseconds: UInt64 = 0
    public var longestSyncNanoseconds: UInt64 = 0
    /// For each batch, how long its oldest change waited from being recorded until it was acknowledged
    /// (the longest wait in the batch): the sum over all batches, and the longest.
    public var oldestWaitNanoseconds: UInt64 = 0
    public var longestWaitNanoseconds: UInt64 = 0
    /// Commits an event loop left to the log's writer thread: because several of its connections waited
    /// on the commit (the loop serves on while the writer thread syncs), or because another thread was
    /// writing the log at that moment (its changes then rode along with the next batch instead of
    /// waiting for the lock).
    public var handedOff = 0

    public init() {}

    /// Changes per batch, on average (0 before any).
    public var meanGroupSize: Double { groups == 0 ? 0 : Double(changes) / Double(groups) }
    /// The average sync, in microseconds (0 before any).
    public func meanSyncMicroseconds(syncs: Int) -> Double { syncs == 0 ? 0 : Double(syncNanoseconds) / Double(syncs) / 1_000 }
    /// The average of the batches' oldest waits, in microseconds (0 before any).
    public var meanOldestWaitMicroseconds: Double { groups == 0 ? 0 : Double(oldestWaitNanoseconds) / Double(groups) / 1_000 }
}
