import EntitledCore

/// Where a data directory's durability stands, for operators (`stats`, metrics): the newest snapshot and
/// what the log holds beyond it, which is what a restart would replay.
public struct PersistenceStatus: Sendable, Hashable {
    /// When the log is forced to disk.
    public var fsync: FsyncPolicy
    /// The number of the last change applied.
    public var lastChange: UInt64
    /// The newest snapshot's file name; `nil` when there is none yet.
    public var snapshotFile: String?
    /// The last change the newest snapshot holds (0 without one).
    public var snapshotChange: UInt64
    /// The newest snapshot's size in bytes.
    public var snapshotBytes: Int?
    /// When this process wrote the newest snapshot; `nil` when it was loaded at start.
    public var snapshotWrittenAt: Timestamp?
    /// How long writing it took; `nil` when it was loaded at start.
    public var snapshotMilliseconds: Int64?
    /// Snapshots this process wrote.
    public var snapshotsWritten: Int
    /// Bytes this process wrote to the log since its last snapshot (since the start before one).
    public var logBytesSinceSnapshot: Int
    /// Bytes this process wrote to the log, headers included.
    public var logBytesWritten: Int
    /// `fdatasync` calls of the log for acknowledgements.
    public var logSyncs: Int
    /// Why writes are refused right now (the disk is full or failed), since when, and whether they resume
    /// by themselves; `nil` while the log takes writes.
    public var outage: LogOutage?
    /// Times the log failed since the start.
    public var logOutages: Int
    /// How the log's batches of writes (group commit) have gone since the start.
    public var groupCommit = GroupCommitStatistics()

    /// Whether the server takes writes.
    public var writable: Bool { outage == nil }

    /// Changes in the log beyond the newest snapshot: what a restart would replay.
    public var changesSinceSnapshot: UInt64 { lastChange &- snapshotChange }
}
