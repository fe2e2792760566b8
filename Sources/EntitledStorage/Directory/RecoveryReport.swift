import EntitledCore

/// What opening a data directory found and did, for the start-up log line.
public struct RecoveryReport: Sendable {
    /// The snapshot loaded, if any.
    public var snapshotFile: String?
    /// The last change the snapshot held (0 without one).
    public var snapshotSequence: UInt64
    /// How many log records were replayed after the snapshot.
    public var replayedRecords: Int
    /// A torn last record that was dropped: the file, where it started and how many bytes were cut.
    public var droppedTornTail: (file: String, offset: Int, bytes: Int)?
    /// Left-over files removed (temporary snapshots, files already covered by the snapshot).
    public var removedFiles: [String]
    /// The number of the last change recovered.
    public var sequence: UInt64
    public var membershipCount: Int
    public var duration: Duration
}

/// One snapshot written.
public struct SnapshotReport: Sendable, Hashable {
    public var file: String
    /// The last change it holds.
    public var sequence: UInt64
    public var bytes: Int
    public var membershipCount: Int
    public var duration: Duration

    /// The duration in whole milliseconds.
    public var milliseconds: Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// What a `snapshot` answer says of it.
    public var summary: SnapshotSummary {
        SnapshotSummary(location: file, sequence: sequence, bytes: bytes, memberships: membershipCount, milliseconds: milliseconds)
    }
}
