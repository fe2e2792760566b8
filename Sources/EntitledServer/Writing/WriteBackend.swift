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
/// notice wait for the log's sync, which each loop's `GroupCommit` asks for once a turn) and `ReplicatedWriteBackend` (a node of a cluster: the write is queued
/// for a group, decided under the cluster's lock, and applied only once committed).
protocol WriteBackend: AnyObject, Sendable {
    /// Takes a write from a connection: decides and applies it now, or queues it. An answer given at once
    /// is written into `output`; one that waits for the commit (`afterCommit`, a single server's log:
    /// each loop commits them once a turn through its `GroupCommit`) is appended to `pending`, which holds
    /// the answers of the connection's writes waiting for the same commit.
    func submit(_ write: WriteRequest, into output: inout ByteBuffer, pending: inout ByteBuffer, delivery: WriteDelivery) -> WriteSubmission

    /// Takes a snapshot off the loop and calls `completion` with the answer line and its error code, if
    /// any; `false` when there is nothing to snapshot to (a store kept in memory only).
    func snapshot(id: ByteBuffer?, completion: @escaping @Sendable (ByteBuffer, ErrorCode?) -> Void) -> Bool

    /// Where the writes are kept, for `stats`.
    var status: WriteBackendStatus { get }
}

/// Where a server's writes are kept, and how that is going (`stats`).
enum WriteBackendStatus {
    /// In memory only (tests): nothing to report.
    case inMemory
    /// A single server's data directory.
    case dataDirectory(PersistenceStatus)
    /// A node of a cluster: its replica of the system of record.
    case replica(ReplicationStatus)

    /// The data directory's state, for `stats`' `persistence`.
    var persistence: PersistenceStatus? {
        if case .dataDirectory(let status) = self { status } else { nil }
    }

    /// The replica's state, for `stats`' `replication`.
    var replication: ReplicationStatus? {
        if case .replica(let status) = self { status } else { nil }
    }
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
    /// Applied, its answer appended to `pending`: it goes once change `sequence` is committed (the
    /// loop's `GroupCommit`), and `notice` is then published.
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
