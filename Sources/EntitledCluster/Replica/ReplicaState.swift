import EntitledCore
import NIOCore

/// What the replicator and everyone else share, under one lock: the writes waiting for a group, the
/// snapshots waiting for an image, the way to wake the replicator, and what `stats` shows.
struct ReplicaState {
    var queue: [PendingWrite] = []
    var captures: [ImageCapture] = []
    /// The replicator waiting for work (`Replicator.waitForWork`), to be woken by a write, a notification
    /// or a snapshot; `signaled` keeps a wake-up given while it was busy.
    var waiter: EventLoopPromise<Void>?
    var signaled = false
    /// How many queued writes wake the replicator (more than one while it gathers a group).
    var wakeThreshold = 1
    var observer: (any ReplicaObserver)?
    var connected = false
    /// Whether the loss of the current connection was logged.
    var lossLogged = false
    var stopping = false
    /// The writes of groups whose fate is being learned (the sweeper tells them "unknown" at their
    /// deadline; the replicator tells them the truth if it learns it first).
    var undecidedFates: [PendingWrite] = []
    /// The writes of the group whose commit is on its way: the sweeper tells them "unknown" at their
    /// deadline if the replicator has not answered them by then, whatever held it up.
    var inFlight: [PendingWrite] = []
    var knownSequence: UInt64 = 0
    var snapshotSequence: UInt64 = 0
    var lastContact: ContinuousClock.Instant?
    var lastError: String?
    var groupsCommitted: UInt64 = 0
    var writesCommitted: UInt64 = 0
    var groupsFailed: UInt64 = 0
    /// Groups decided again because a change committed meanwhile touched what they looked at.
    var groupsRedecided: UInt64 = 0
    var reconnects: UInt64 = 0
    var changesReplicated: UInt64 = 0
    /// Whether the replicator listens for other nodes' commits now (`Replicator+Listening`).
    var listening = false
    var catchUps: UInt64 = 0
    /// The database's identity at the last connection (`nil` where the role may not read it).
    var database: DatabaseIdentity?
    /// Times the replica was found to hold changes the database does not (lost by a failover), and what
    /// the last time found.
    var divergences: UInt64 = 0
    var lastDivergence: String?
    /// Marks applied: times the numbering of changes resumed further on.
    var historyMarks: UInt64 = 0
    /// Times the replica was loaded again from the database.
    var reloads: UInt64 = 0
    /// Whether reads are withheld while the replica, known to hold lost changes, is reloaded.
    var withholdingReads = false

    /// Takes the waiter to wake (nil when the replicator is busy: the wake-up is kept).
    mutating func takeWaiter() -> EventLoopPromise<Void>? {
        guard let waiter else {
            signaled = true
            return nil
        }
        self.waiter = nil
        return waiter
    }
}
