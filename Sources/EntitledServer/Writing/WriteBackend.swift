import EntitledCore
import EntitledStorage
import EntitledWire
import NIOCore

/// Where every write of a server goes to be committed (a single server's log, a cluster's system of
/// record), and from where its change is published once it is: answered to its writer, pushed to the
/// watchers of what it touched, and released to the reads that wait for it (`minSeq`). "Serve only what
/// is committed" lives behind this one seam; a connection and its loop know no log and no database.
///
/// Two adapters: `LogWriteBackend` (a single server: the write is applied at once and its answer and
/// notice wait for the log's sync) and `ReplicatedWriteBackend` (a node of a cluster: the write is queued
/// for a group, decided under the cluster's lock, and applied only once committed).
protocol WriteBackend: AnyObject, Sendable {
    /// Whether a submitted write's change is in the store readers are served before it is committed. A
    /// single server's is (its answer and notice wait instead: see STORAGE.md for what other readers
    /// see meanwhile); a cluster node's is not, so a connection's reads wait for its own pending writes.
    var appliesBeforeCommit: Bool { get }

    /// Takes a write from a connection: decides and applies it now, or queues it. An answer given at once
    /// is written into `output`; one that waits for the commit (`afterCommit`) is appended to `pending`,
    /// which holds the answers of the connection's writes waiting for the same commit.
    func submit(_ write: WriteRequest, into output: inout ByteBuffer, pending: inout ByteBuffer, delivery: WriteDelivery) -> WriteSubmission

    /// Asks that every change through `sequence` be committed (a loop's end of turn, for the writes its
    /// connections wait for). Returns the outcome when it is known at once; otherwise `nil`, and calls
    /// `completion` (on a thread of the backend's) when it is. `onThisThread`: the caller may block until
    /// the commit is made (a loop serving one writer) rather than hand it to a thread of the backend's.
    func commit(
        through sequence: UInt64, onThisThread: Bool,
        completion: @escaping @Sendable (Result<Void, WriteFailure>) -> Void
    ) -> Result<Void, WriteFailure>?

    /// Publishes `notice` once change `notice.sequence` is committed (a closed connection's writes: their
    /// writer is gone, their watchers are still told).
    func publishWhenCommitted(_ notice: AccessNotice)

    /// Takes a snapshot off the loop and calls `completion` with the answer line and its error code, if
    /// any; `nil` when there is nothing to snapshot to (a store kept in memory only).
    func snapshot(id: ByteBuffer?, completion: @escaping @Sendable (ByteBuffer, ErrorCode?) -> Void) -> Bool

    /// The data directory's state, for `stats` (a single server with one).
    var persistenceStatus: PersistenceStatus? { get }
    /// The replica's state, for `stats` (a node of a cluster).
    var replicationStatus: ReplicationStatus? { get }
    /// How far the log has got, for reads that wait for it (a single server with a data directory).
    var logProgress: LogProgress? { get }

    /// The loops that serve connections started (`nil`: they stopped).
    func serving(_ loops: [ServingLoop]?)
}

/// A decoded write from a connection: the store's write, and what its answer needs.
struct WriteRequest: Sendable {
    var write: StoreWrite
    /// The request's `id`, echoed in its answer.
    var id: ByteBuffer?
}

/// What became of a submitted write.
enum WriteSubmission {
    /// Answered (into `output`): refused, or committed already. `error` is its code, if it failed.
    case answered(error: ErrorCode?)
    /// Applied, its answer appended to `pending`: it goes once change `sequence` is committed
    /// (`WriteBackend.commit`), and `notice` is then published.
    case afterCommit(sequence: UInt64, notice: AccessNotice?)
    /// Queued: `WriteDelivery` brings the answer.
    case queued
}

/// How a queued write's answer reaches its connection: on the connection's own loop. A plain value (no
/// closure to allocate) for the single server, which never uses it.
struct WriteDelivery: Sendable {
    /// `nil` for a write answered without a connection (tests, tools): its answer is dropped.
    let connection: UncheckedConnection?
    let token: UInt64

    /// Hands `answer` to the connection, whose loop writes it in its turn.
    func deliver(_ answer: ByteBuffer, error: ErrorCode?) {
        guard let connection else { return }
        let token = self.token
        connection.value.loop.execute { connection.value.writeAnswered(token, answer: answer, error: error) }
    }
}

/// Who is told of committed changes: the connections that watch what they touched, and the reads that
/// wait for them (`minSeq`). Shared by every loop, and the cluster's observer of its replica.
final class Publication: ReplicaObserver {
    let watchHub = WatchHub()
    let sequenceWaiters = SequenceWaiters()
    /// Set while a cluster node's replica is reloaded after the database lost changes it held.
    let withheldReads = WithheldReads()

    var wantsNotices: Bool { watchHub.hasWatchers }

    func replicaApplied(through sequence: UInt64, notices: [AccessNotice]) {
        for notice in notices { watchHub.publish(notice) }
        sequenceWaiters.advanced(to: sequence)
    }

    func replicaWithholdsReads(_ reason: String?) {
        withheldReads.set(reason)
    }
}
