/// A system of record that several nodes share (EntitledCluster's PostgreSQL): the order of every change,
/// for every node. Each node keeps the whole store in memory as a replica of it.
///
/// A node never decides a write on its own replica alone, nor shows a change before it is committed: the
/// write is queued with `submit` and decided in the next group of writes, once the replica has applied
/// every change committed before the group and while no other node can commit (the system of record's
/// lock), so it decides on the newest state, as a single server would have. The group's changes are
/// committed together, and only then applied to the replica, in order: no reader, watcher or `minSeq`
/// waiter ever sees a change that was not committed. Reads never wait for any of it.
public protocol ReplicatedLog: AnyObject, Sendable {
    /// Queues `write` for the next group of writes and calls `completion` (on a thread of the log's)
    /// once its fate is known: the write as applied to the replica (its group committed), or why it was
    /// not acknowledged, saying whether its change was certainly not made (`WriteFailure.Outcome`). A
    /// write the store refuses (`not_found`, `conflict`) changes nothing and completes with that refusal
    /// as `WriteFailure.refused`.
    func submit(_ write: StoreWrite, completion: @escaping @Sendable (Result<AppliedWrite, WriteFailure>) -> Void)

    /// Sets who is told of every change the replica applies, this node's and the other nodes', in order:
    /// the server tells its watchers and releases the reads waiting for them (`minSeq`).
    func setObserver(_ observer: any ReplicaObserver)

    /// Writes a snapshot of the replica into the system of record, and removes the changes it covers.
    /// Checks and writes go on meanwhile (on every node).
    func snapshot() throws(JournalError) -> SnapshotSummary

    /// Where the replica stands, read without waiting: for `stats` and the metrics.
    var replicationStatus: ReplicationStatus { get }
}

/// Told of the changes a replica applies, in order, each committed.
public protocol ReplicaObserver: AnyObject, Sendable {
    /// Whether notices are wanted (some connection watches): building them costs a few allocations.
    var wantsNotices: Bool { get }
    /// The replica has applied every change through `sequence`; `notices` are those of the newly applied
    /// ones that touched memberships (empty unless `wantsNotices`). Called on the log's thread, before the
    /// writers of this node's changes among them are answered.
    func replicaApplied(through sequence: UInt64, notices: [AccessNotice])
    /// Reads are to be withheld (answered `loading`, saying `reason`) from now on, or served again (`nil`):
    /// the replica is known to hold changes the system of record no longer has, until it is reloaded.
    func replicaWithholdsReads(_ reason: String?)
}

extension ReplicaObserver {
    public func replicaWithholdsReads(_ reason: String?) {}
}

/// How far a node's replica is from the system of record, and how its writes fare.
public struct ReplicationStatus: Sendable, Hashable {
    /// The system of record, for people, without any password (`postgres://entitled@db:5432/app`).
    public var source: String
    /// This node's name in the change table (`--node-name`, else host name and process id).
    public var node: String
    /// Whether the node holds a working connection to the system of record now.
    public var connected: Bool
    /// Whether writes are taken now: connected, and no group of writes waits to learn its fate.
    public var writable: Bool
    /// The newest change the replica has applied.
    public var appliedSequence: UInt64
    /// The newest change the node knows the system of record holds (from its last contact).
    public var knownSequence: UInt64
    /// Seconds since the node last heard from the system of record; `nil` before the first contact.
    public var secondsSinceContact: Double?
    /// The newest snapshot in the system of record, as last seen.
    public var snapshotSequence: UInt64
    /// Groups of writes committed by this node, and the writes in them.
    public var groupsCommitted: UInt64
    public var writesCommitted: UInt64
    /// Groups that failed (not committed, or outcome unknown until resolved), and times the connection
    /// was made again after being lost.
    public var groupsFailed: UInt64
    public var reconnects: UInt64
    /// Groups decided again because a change another node committed meanwhile touched what they looked at
    /// (the database refused them; none of their writes was made).
    public var groupsRedecided: UInt64
    /// Changes made by other nodes that this replica applied.
    public var changesReplicated: UInt64
    /// Whether the system of record tells this node of other nodes' commits now: a node that commits
    /// back to back stops listening (each of its commits brings what the others committed), and listens
    /// again once its writes stop.
    public var listening: Bool
    /// Times the node read the changes committed since its replica's newest (besides its own commits).
    public var catchUps: UInt64
    /// The last error met with the system of record, if the node is not connected or writes failed.
    public var lastError: String?
    /// Which database the system of record is, as last seen (a PostgreSQL system identifier and timeline:
    /// a failover shows as a new timeline); `nil` when it cannot be read.
    public var database: String?
    /// Times the replica was found to hold changes the system of record does not have (a failover of the
    /// database lost them) and was loaded again; and what the last of them found.
    public var divergences: UInt64 = 0
    public var lastDivergence: String?
    /// Times the numbering of changes resumed further on (after a failover), as the replica applied them.
    public var historyMarks: UInt64 = 0
    /// Times the replica was loaded again from the system of record (a divergence, or changes it needed
    /// were removed while the node was away).
    public var reloads: UInt64 = 0
    /// Whether reads are answered `loading` now: the replica is known to hold lost changes and is being
    /// loaded again.
    public var withholdingReads = false
    /// How far the system of record's clock is ahead of this machine's (seconds, negative when behind), as
    /// last measured, and how far that measurement may be off; the node records and answers in the system
    /// of record's time. `nil` before the first measurement.
    public var clockOffsetSeconds: Double?
    public var clockUncertaintySeconds: Double?

    /// Changes the replica is behind what the node knows the system of record holds.
    public var lagChanges: UInt64 { knownSequence > appliedSequence ? knownSequence - appliedSequence : 0 }

    public init(
        source: String, node: String, connected: Bool, writable: Bool, appliedSequence: UInt64, knownSequence: UInt64,
        secondsSinceContact: Double?, snapshotSequence: UInt64, groupsCommitted: UInt64, writesCommitted: UInt64,
        groupsFailed: UInt64, reconnects: UInt64, changesReplicated: UInt64, lastError: String?, groupsRedecided: UInt64 = 0,
        listening: Bool = true, catchUps: UInt64 = 0
    ) {
        self.source = source
        self.node = node
        self.connected = connected
        self.writable = writable
        self.appliedSequence = appliedSequence
        self.knownSequence = knownSequence
        self.secondsSinceContact = secondsSinceContact
        self.snapshotSequence = snapshotSequence
        self.groupsCommitted = groupsCommitted
        self.writesCommitted = writesCommitted
        self.groupsFailed = groupsFailed
        self.groupsRedecided = groupsRedecided
        self.reconnects = reconnects
        self.changesReplicated = changesReplicated
        self.listening = listening
        self.catchUps = catchUps
        self.lastError = lastError
    }
}
