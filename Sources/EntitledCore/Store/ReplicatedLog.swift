/// A system of record that several nodes share (EntitledCluster's PostgreSQL): the order of every change,
/// for every node. Each node keeps the whole store in memory as a replica of it.
///
/// A node never decides a write on its own replica alone: the write is queued with `submit`, and runs in
/// the next group of writes, once the replica has applied every change committed before the group and
/// while no other node can commit (the system of record's lock). So it decides on the newest state, as a
/// single server would have, and the changes it makes (recorded by the store's journal, which is the
/// replicated log's) are committed together with the rest of the group. Reads never wait for it.
public protocol ReplicatedLog: AnyObject, Sendable {
    /// Queues `decide` for the next group of writes and calls `completion` (on a thread of the log's)
    /// once that group's fate is known. `decide` runs on the log's thread, with the replica up to date:
    /// it makes its changes through the store's write methods, which number them and hand them to the
    /// journal. `completion` gets `nil` when the group committed, so the write may be acknowledged, or
    /// the reason it was not: the group's changes are then undone before `completion` runs, or, if the
    /// outcome is still unknown when the write's time is up, the reason says that it may have been
    /// applied. A group that changed nothing (a repeated claim) commits nothing and completes at once.
    func submit(_ decide: @escaping @Sendable () -> Void, completion: @escaping @Sendable (JournalError?) -> Void)

    /// Sets what is told about changes other nodes made, once the replica has applied them, in order,
    /// in groups. The server announces them to its watchers and releases reads waiting for them (`minSeq`).
    func setChangeObserver(_ observer: @escaping @Sendable (_ applied: [ReplicatedChange]) -> Void)

    /// Writes a snapshot of the replica into the system of record, and removes the changes it covers.
    /// Checks and writes go on meanwhile (on every node).
    func snapshot() throws(JournalError) -> ReplicatedSnapshot

    /// Where the replica stands, read without waiting: for `stats` and the metrics.
    var replicationStatus: ReplicationStatus { get }
}

/// A change another node made, as this node's replica applied it.
public struct ReplicatedChange: Sendable {
    public var sequence: UInt64
    public var change: StoreChange
    public var context: ChangeContext

    public init(sequence: UInt64, change: StoreChange, context: ChangeContext) {
        self.sequence = sequence
        self.change = change
        self.context = context
    }
}

/// A snapshot written into the system of record.
public struct ReplicatedSnapshot: Sendable, Hashable {
    /// Where it is kept, for people: such as `postgres:entitled.snapshots/1234`.
    public var location: String
    /// The last change it holds.
    public var sequence: UInt64
    public var bytes: Int
    public var memberships: Int
    public var milliseconds: Int

    public init(location: String, sequence: UInt64, bytes: Int, memberships: Int, milliseconds: Int) {
        self.location = location
        self.sequence = sequence
        self.bytes = bytes
        self.memberships = memberships
        self.milliseconds = milliseconds
    }
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
    /// Changes made by other nodes that this replica applied.
    public var changesReplicated: UInt64
    /// The last error met with the system of record, if the node is not connected or writes failed.
    public var lastError: String?

    /// Changes the replica is behind what the node knows the system of record holds.
    public var lagChanges: UInt64 { knownSequence > appliedSequence ? knownSequence - appliedSequence : 0 }

    public init(
        source: String, node: String, connected: Bool, writable: Bool, appliedSequence: UInt64, knownSequence: UInt64,
        secondsSinceContact: Double?, snapshotSequence: UInt64, groupsCommitted: UInt64, writesCommitted: UInt64,
        groupsFailed: UInt64, reconnects: UInt64, changesReplicated: UInt64, lastError: String?
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
        self.reconnects = reconnects
        self.changesReplicated = changesReplicated
        self.lastError = lastError
    }
}
