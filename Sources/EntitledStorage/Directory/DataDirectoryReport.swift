/// What `DataDirectoryInspector.verify(directory:)` found: typed, for `entitled-datadir` to print (the
/// text a person reads is the tool's) and for tests to check.
public struct VerificationReport: Sendable, Hashable {
    /// Whether a server would start on the directory.
    public enum Verdict: String, Sendable, Hashable {
        /// Every file a server reads passes its checks.
        case ok
        /// As `ok`, except that the newest log segment ends in a torn record, which a server drops (with a
        /// warning) at start: a crash cut it short, so it was never acknowledged.
        case okWithTornTail = "ok-with-torn-tail"
        /// A server would refuse to start.
        case damaged
    }

    /// A problem that belongs to no single file.
    public enum Problem: Sendable, Hashable {
        /// The path is not a directory (a server would create an empty one there).
        case notADirectory
        /// The directory could not be listed.
        case unlistable(StorageError)
        /// The newest snapshot is damaged, so the log after it could not be checked for continuity.
        case newestSnapshotDamaged
    }

    /// The directory as given.
    public var directory: String
    /// Snapshots (oldest first), then log segments (in sequence order), then left-over temporary files.
    public var files: [DataFileReport] = []
    /// Problems that belong to no single file.
    public var problems: [Problem] = []
    public var verdict = Verdict.ok
    /// The last change a server starting now would recover; `nil` when damaged.
    public var recoveredSequence: UInt64?
    /// How many memberships it would hold; `nil` when damaged.
    public var recoveredMembershipCount: Int?

    init(directory: String) {
        self.directory = directory
    }
}

/// One file of a data directory, as `verify` found it.
public struct DataFileReport: Sendable, Hashable {
    /// What the file is, by its name.
    public enum Kind: Sendable, Hashable {
        /// `snapshot-<sequence>.snap`
        case snapshot
        /// `log-<first sequence>.wal`
        case logSegment
        /// `snapshot-<sequence>.snap.tmp`, left by a crash while a snapshot was written.
        case temporarySnapshot
    }

    /// What the checks found.
    public enum Status: Sendable, Hashable {
        /// The file passes every check.
        case ok
        /// The file ends in an incomplete record starting at `offset`; `bytes` from there to the end.
        case tornTail(offset: Int, bytes: Int)
        /// The file fails a check at byte `offset`.
        case corrupt(offset: Int, problem: String)
        /// The file is intact, but its record at `offset` does not follow the change before it: a file
        /// between them is missing.
        case brokenHistory(offset: Int, problem: String)
        /// The file could not be read.
        case unreadable(String)
        /// The file is not read by a server, so it was not checked.
        case notRead

        /// Whether a server that reads the file refuses to start.
        public var isDamage: Bool {
            switch self {
            case .corrupt, .brokenHistory, .unreadable: return true
            case .ok, .tornTail, .notRead: return false
            }
        }

        /// Whether the file ends in a torn record.
        public var isTornTail: Bool {
            if case .tornTail = self { return true }
            return false
        }
    }

    /// What a server does with the file, where that is worth saying.
    public enum Note: Sendable, Hashable {
        /// The newest snapshot: a server starts from it.
        case newestSnapshot
        /// A snapshot older than the snapshot `newest`: a server does not read it, and removes it at start.
        case olderSnapshot(newest: String)
        /// A log segment that ends inside its file header (a crash during a log rotation): a server
        /// removes it at start.
        case tornInHeader
        /// A log segment whose last record a crash cut short, so it was never acknowledged: a server drops
        /// it at start.
        case tornLastRecord
        /// `bytes` of zero-filled space after the last record, from `offset`: prepared for records to come,
        /// not a record. A server trims it at start when `trimmedAtStart` (the newest segment).
        case unusedSpace(offset: Int, bytes: Int, trimmedAtStart: Bool)
        /// A log segment whose every record is in the snapshot `snapshot`: a server removes it at start
        /// (after checking it).
        case coveredBy(snapshot: String)
        /// A snapshot a crash interrupted: a server removes it at start.
        case interruptedSnapshot
    }

    public var kind: Kind
    /// The file name, without the directory.
    public var name: String
    /// The size in bytes.
    public var size: Int
    /// The first record's sequence (log segments with records).
    public var firstSequence: UInt64?
    /// The last record's sequence, or the last change a snapshot holds. For a damaged segment, the last
    /// record before the damage.
    public var lastSequence: UInt64?
    /// Records in a log segment (before the damage, for a damaged one).
    public var recordCount: Int?
    /// Memberships in an intact snapshot.
    public var membershipCount: Int?
    /// What the checks found.
    public var status = Status.ok
    /// Whether a starting server reads this file, so that damage in it stops the start.
    public var affectsRecovery: Bool
    /// What a server does with the file, where that is worth saying.
    public var note: Note?

    /// Whether the file is a log segment whose file header is damaged, which `cutLog` does not repair (it
    /// cuts records after an intact header only).
    public var hasDamagedSegmentHeader: Bool {
        guard kind == .logSegment, case .corrupt(let offset, _) = status else { return false }
        return offset < LogFormat.segmentHeaderLength
    }

    init(kind: Kind, name: String, size: Int, affectsRecovery: Bool) {
        self.kind = kind
        self.name = name
        self.size = size
        self.affectsRecovery = affectsRecovery
    }
}

/// What `DataDirectoryInspector.cutLog(directory:file:)` did.
public struct CutReport: Sendable, Hashable {
    /// What was wrong where the cut was made.
    public enum Damage: Sendable, Hashable {
        /// A crash cut the last record short: it starts at `offset`, with `bytes` from there to the end.
        case tornTail(offset: Int, bytes: Int)
        /// The first byte found wrong is at `offset`.
        case corrupt(offset: Int, problem: String)
    }

    /// The directory as given.
    public var directory: String
    /// The segment's name.
    public var file: String
    /// Whether the file was cut; `false` when it was intact.
    public var changed: Bool
    /// The size before the cut.
    public var originalSize: Int
    /// Where the file ends now: right after its last good record.
    public var cutOffset: Int
    /// Bytes discarded: the original size minus `cutOffset`.
    public var droppedBytes: Int
    /// Records discarded, best effort: the damaged one, and every intact-looking one after it. Where a
    /// record header is damaged its length is unknown, so the damaged stretch counts as one record.
    public var droppedRecords: Int
    /// Records the segment still holds.
    public var keptRecords: Int
    /// The last change the segment still holds; `nil` when it holds none.
    public var lastGoodSequence: UInt64?
    /// What was wrong where the cut was made; `nil` when nothing was cut.
    public var damage: Damage?
    /// What `verify` says about the whole directory afterwards.
    public var verdictAfterCut: VerificationReport.Verdict
}
