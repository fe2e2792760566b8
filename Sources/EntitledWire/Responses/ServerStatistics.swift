import EntitledCore

/// What `stats` answers: the server's counters since it started, read at one moment. Filled in by the
/// server, written by `ResponseEncoder`; a plain value so that the wire codec knows nothing of loops.
public struct ServerStatistics: Sendable {
    /// The server's name and version, as `hello` gives it.
    public var server: String
    public var startedAt: Timestamp
    public var uptimeSeconds: Int64
    public var connections: Connections
    /// Requests answered, by operation, in `Request.Operation` order (zeros included).
    public var requests: [(operation: String, count: UInt64)]
    /// Lines answered with an error before an operation was known: not JSON, no valid `op`, refused.
    public var invalidRequests: UInt64
    /// Error answers, by code, in `ErrorCode` order (zeros included).
    public var errors: [(code: String, count: UInt64)]
    /// Latency by operation, for the operations answered at least once.
    public var latency: [(operation: String, summary: LatencySummary)]
    public var store: StoreSizes
    /// `nil` for a server that keeps no data directory.
    public var persistence: Persistence?
    /// A node of a cluster: where its replica stands against the shared system of record (written in
    /// place of `persistence`); `nil` for a standalone server.
    public var replication: ReplicationStatus?

    public init(
        server: String, startedAt: Timestamp, uptimeSeconds: Int64, connections: Connections,
        requests: [(operation: String, count: UInt64)], invalidRequests: UInt64, errors: [(code: String, count: UInt64)],
        latency: [(operation: String, summary: LatencySummary)], store: StoreSizes, persistence: Persistence?,
        replication: ReplicationStatus? = nil
    ) {
        self.server = server
        self.startedAt = startedAt
        self.uptimeSeconds = uptimeSeconds
        self.connections = connections
        self.requests = requests
        self.invalidRequests = invalidRequests
        self.errors = errors
        self.latency = latency
        self.store = store
        self.persistence = persistence
        self.replication = replication
    }

    public struct Connections: Sendable {
        /// Open now.
        public var open: Int
        /// Accepted since the start.
        public var accepted: UInt64
        /// Refused since the start for being over `--max-connections`.
        public var refused: UInt64
        /// Closed since the start by the idle timeout.
        public var closedIdle: UInt64

        public init(open: Int, accepted: UInt64, refused: UInt64, closedIdle: UInt64) {
            self.open = open
            self.accepted = accepted
            self.refused = refused
            self.closedIdle = closedIdle
        }
    }

    /// The time from reading a request's line to its answer being ready to send (for a change, until the
    /// log holds it), in microseconds. Percentiles are read off buckets an eighth of a power of two wide,
    /// so they are within about 7% of the exact value.
    public struct LatencySummary: Sendable {
        public var count: UInt64
        public var p50: Double
        public var p90: Double
        public var p99: Double
        public var p999: Double
        public var max: Double

        public init(count: UInt64, p50: Double, p90: Double, p99: Double, p999: Double, max: Double) {
            self.count = count
            self.p50 = p50
            self.p90 = p90
            self.p99 = p99
            self.p999 = p999
            self.max = max
        }
    }

    /// The newest snapshot and what the log holds beyond it.
    public struct Persistence: Sendable {
        /// When the log is forced to disk (the server's `--fsync`).
        public var fsync: FsyncPolicy
        public var lastChange: UInt64
        public var changesSinceSnapshot: UInt64
        public var logBytesSinceSnapshot: Int
        public var logBytesWritten: Int
        public var logSyncs: Int
        public var snapshotFile: String?
        public var snapshotChange: UInt64
        public var snapshotBytes: Int?
        /// `nil` when the newest snapshot was loaded at start rather than written since.
        public var snapshotWrittenAt: Timestamp?
        public var snapshotMilliseconds: Int64?
        public var snapshotsWritten: Int
        /// Why writes are refused right now; `nil` while the server takes writes.
        public var unwritable: Unwritable?
        /// Times the log failed since the start (each failed change undone).
        public var logOutages: Int
        /// The log's group commit; `nil` from servers that do not report it.
        public var groupCommit: GroupCommit?

        /// How the log's batches of writes have gone: `persistence.groupCommit` of `stats`.
        public struct GroupCommit: Sendable, Hashable {
            /// Batches that acknowledged writes (one write and, with `always`, one `fdatasync` each).
            public var groups: Int
            /// Changes those batches acknowledged.
            public var changes: Int
            /// Changes per batch, on average.
            public var meanSize: Double
            /// The most changes one batch acknowledged.
            public var largest: Int
            /// The average and the longest acknowledging `fdatasync`, in microseconds.
            public var meanSyncMicros: Double
            public var maxSyncMicros: Double
            /// How long each batch's oldest change waited from being recorded to being acknowledged, on
            /// average and at most, in microseconds.
            public var meanWaitMicros: Double
            public var maxWaitMicros: Double
            /// Commits an event loop left to the log's writer thread because another thread was writing.
            public var handedOff: Int

            public init(
                groups: Int, changes: Int, meanSize: Double, largest: Int, meanSyncMicros: Double, maxSyncMicros: Double,
                meanWaitMicros: Double, maxWaitMicros: Double, handedOff: Int
            ) {
                self.groups = groups
                self.changes = changes
                self.meanSize = meanSize
                self.largest = largest
                self.meanSyncMicros = meanSyncMicros
                self.maxSyncMicros = maxSyncMicros
                self.meanWaitMicros = meanWaitMicros
                self.maxWaitMicros = maxWaitMicros
                self.handedOff = handedOff
            }
        }

        /// Whether the server takes writes.
        public var writable: Bool { unwritable == nil }

        /// When the log is forced to disk, as `stats` spells it (`persistence.fsync`): the server's
        /// `--fsync` setting (EntitledStorage's `FsyncPolicy`, which this module does not know).
        public enum FsyncPolicy: String, Sendable, CaseIterable {
            /// Every write is on disk before it is acknowledged.
            case always
            /// Writes are synced once a second.
            case everysec
            /// The server never syncs; the operating system writes when it likes.
            case no
        }

        /// Why writes are refused: the log's disk is full (writes resume by themselves) or failed (until a restart).
        public struct Unwritable: Sendable {
            /// Which failure it is, as `stats` spells it (`persistence.unwritable.kind`).
            public enum Kind: String, Sendable, CaseIterable {
                /// The disk refused space; writes resume by themselves once it takes them again.
                case diskFull = "disk_full"
                /// A write or sync failed otherwise; writes resume only after a restart.
                case diskFailed = "disk_failed"
            }

            public var kind: Kind
            /// The sentence writers get with `unavailable`.
            public var reason: String
            public var since: Timestamp
            /// Attempts to write again so far.
            public var retries: Int

            /// Whether writes resume by themselves (a full disk) or only after a restart.
            public var resumesByItself: Bool { kind == .diskFull }

            public init(kind: Kind, reason: String, since: Timestamp, retries: Int) {
                self.kind = kind
                self.reason = reason
                self.since = since
                self.retries = retries
            }
        }

        public init(
            fsync: FsyncPolicy, lastChange: UInt64, changesSinceSnapshot: UInt64, logBytesSinceSnapshot: Int, logBytesWritten: Int,
            logSyncs: Int, snapshotFile: String?, snapshotChange: UInt64, snapshotBytes: Int?, snapshotWrittenAt: Timestamp?,
            snapshotMilliseconds: Int64?, snapshotsWritten: Int, unwritable: Unwritable? = nil, logOutages: Int = 0,
            groupCommit: GroupCommit? = nil
        ) {
            self.groupCommit = groupCommit
            self.fsync = fsync
            self.lastChange = lastChange
            self.changesSinceSnapshot = changesSinceSnapshot
            self.logBytesSinceSnapshot = logBytesSinceSnapshot
            self.logBytesWritten = logBytesWritten
            self.logSyncs = logSyncs
            self.snapshotFile = snapshotFile
            self.snapshotChange = snapshotChange
            self.snapshotBytes = snapshotBytes
            self.snapshotWrittenAt = snapshotWrittenAt
            self.snapshotMilliseconds = snapshotMilliseconds
            self.snapshotsWritten = snapshotsWritten
            self.unwritable = unwritable
            self.logOutages = logOutages
        }
    }
}
