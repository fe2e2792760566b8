import EntitledCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO

/// A node's replica of the cluster's store, and its way of writing into it: the `ReplicatedLog` that
/// the server writes through in cluster mode (Protocol/CLUSTER.md).
///
/// One loop (a task) owns the connection to PostgreSQL and does everything that touches the order of
/// changes, one thing at a time: it applies the changes other nodes committed (woken by `NOTIFY`, or
/// by a poll every `pollInterval` when notifications are lost), and it commits groups of writes. A
/// group locks the `head` row, catches the replica up to it, lets each queued write decide against
/// that newest state, inserts the changes they made and commits, so that every node applies the same
/// changes in the same order. Checks never wait for any of it: they read the store as always.
public final class PostgresReplicatedLog: ReplicatedLog, Sendable {
    /// The replica: every membership, as of `appliedSequence`.
    public let store: EntitlementStore
    public let location: PostgresLocation
    public let options: ClusterOptions
    let collector: GroupCollector
    let logger: Logger
    let wake = WakeSignal()
    let state: NIOLockedValueBox<LoopState>
    private let observer = NIOLockedValueBox<(@Sendable ([ReplicatedChange]) -> Void)?>(nil)
    private let loopTask = NIOLockedValueBox<Task<Void, Never>?>(nil)
    private let sweeperTask = NIOLockedValueBox<Task<Void, Never>?>(nil)

    /// What the loop and the writers share, under one lock.
    struct LoopState {
        var queue: [PendingWrite] = []
        var captures: [ImageCapture] = []
        var connected = false
        /// Whether the loss of the current connection was logged (a failed group marks the node
        /// disconnected before the work loop gets to log it).
        var lossLogged = false
        var stopping = false
        /// A group whose fate the loop must learn before it takes other writes.
        var unresolved: UnresolvedGroup?
        var knownSequence: UInt64 = 0
        var snapshotSequence: UInt64 = 0
        var lastContact: ContinuousClock.Instant?
        var lastError: String?
        var groupsCommitted: UInt64 = 0
        var writesCommitted: UInt64 = 0
        var groupsFailed: UInt64 = 0
        var reconnects: UInt64 = 0
        var changesReplicated: UInt64 = 0
    }

    /// A group that failed after its writes decided: its changes are in memory, and perhaps committed.
    struct UnresolvedGroup {
        var writes: [PendingWrite]
        var firstSequence: UInt64
        var group: Int64
        /// Whether COMMIT was sent (so the group may have committed) or the transaction ended before it.
        var mayHaveCommitted: Bool
        var reason: String
    }

    init(store: EntitlementStore, collector: GroupCollector, location: PostgresLocation, options: ClusterOptions, logger: Logger, known: UInt64, snapshot: UInt64) {
        self.store = store
        self.collector = collector
        self.location = location
        self.options = options
        self.logger = logger
        var initial = LoopState()
        initial.knownSequence = known
        initial.snapshotSequence = snapshot
        initial.lastContact = .now
        initial.connected = true
        self.state = NIOLockedValueBox(initial)
    }

    // MARK: ReplicatedLog

    public func submit(_ decide: @escaping @Sendable () -> Void, completion: @escaping @Sendable (JournalError?) -> Void) {
        let write = PendingWrite(decide: decide, completion: completion, deadline: .now + options.writeTimeout)
        let refusal = state.withLockedValue { state -> String? in
            if state.stopping { return "the node is stopping" }
            if !state.connected {
                return "the database is unreachable (\(state.lastError ?? "connecting")); writes are refused until it is back, checks still answer"
            }
            if let unresolved = state.unresolved {
                return "the node is finding out whether its last group of writes committed (\(unresolved.reason)); retry shortly"
            }
            state.queue.append(write)
            return nil
        }
        if let refusal {
            write.complete(JournalError(reason: refusal))
        } else {
            wake.signal()
        }
    }

    public func setChangeObserver(_ observer: @escaping @Sendable ([ReplicatedChange]) -> Void) {
        self.observer.withLockedValue { $0 = observer }
    }

    func announce(_ changes: [ReplicatedChange]) {
        guard !changes.isEmpty, let observer = observer.withLockedValue({ $0 }) else { return }
        observer(changes)
    }

    public var replicationStatus: ReplicationStatus {
        let applied = store.sequence
        return state.withLockedValue { state in
            ReplicationStatus(
                source: location.description, node: options.nodeName, connected: state.connected,
                writable: state.connected && state.unresolved == nil && !state.stopping,
                appliedSequence: applied, knownSequence: max(state.knownSequence, applied),
                secondsSinceContact: state.lastContact.map { Self.seconds(ContinuousClock.now - $0) },
                snapshotSequence: state.snapshotSequence, groupsCommitted: state.groupsCommitted,
                writesCommitted: state.writesCommitted, groupsFailed: state.groupsFailed, reconnects: state.reconnects,
                changesReplicated: state.changesReplicated, lastError: state.lastError
            )
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    // MARK: Running

    /// Starts the loop on `connection` (the one `open` used) and the sweeper that answers writes whose
    /// time is up.
    func start(on connection: PostgresConnection) {
        loopTask.withLockedValue { $0 = Task { await self.runLoop(firstConnection: connection) } }
        sweeperTask.withLockedValue { $0 = Task { await self.sweepExpiredWrites() } }
    }

    /// Stops taking writes, answers the queued ones `unavailable`, and ends the loop and its connection.
    /// A group being committed is finished first (its writers hear its outcome).
    public func shutdown() async {
        let queued = state.withLockedValue { state -> [PendingWrite] in
            state.stopping = true
            defer { state.queue = [] }
            return state.queue
        }
        for write in queued { write.complete(JournalError(reason: "the node is stopping")) }
        wake.signal()
        await loopTask.withLockedValue { $0 }?.value
        sweeperTask.withLockedValue { $0 }?.cancel()
        await sweeperTask.withLockedValue { $0 }?.value
    }

    /// Answers the writes whose time ran out: queued ones were never decided (nothing happened); those
    /// of an unresolved group may have committed, and are told so.
    private func sweepExpiredWrites() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(50))
            let now = ContinuousClock.now
            let (expired, unknown) = state.withLockedValue { state -> ([PendingWrite], [(PendingWrite, String)]) in
                var expired: [PendingWrite] = []
                state.queue.removeAll { write in
                    guard write.deadline <= now else { return false }
                    expired.append(write)
                    return true
                }
                var unknown: [(PendingWrite, String)] = []
                if let unresolved = state.unresolved {
                    for write in unresolved.writes where write.deadline <= now && !write.isAnswered {
                        let message = unresolved.mayHaveCommitted
                            ? "the database did not confirm the commit in time (\(unresolved.reason)); the change may have been made: retry it (with the same idempotency key for a grant) to find out"
                            : "the change was not committed (\(unresolved.reason)); this node undoes it once the database is back"
                        unknown.append((write, message))
                    }
                }
                return (expired, unknown)
            }
            let timeout = Self.seconds(options.writeTimeout)
            for write in expired {
                write.complete(JournalError(reason: "the database did not take the write within \(timeout) s (\(state.withLockedValue { $0.lastError } ?? "the cluster's write lock is busy")); nothing was changed"))
            }
            for (write, message) in unknown { write.complete(JournalError(reason: message)) }
        }
    }
}

/// A request for a consistent image of the replica between two groups (a snapshot's).
final class ImageCapture: Sendable {
    private let result = NIOLockedValueBox<StoreImage?>(nil)
    private let done = ConditionLock(value: 0)

    func fulfil(_ image: StoreImage) {
        result.withLockedValue { $0 = image }
        done.lock()
        done.unlock(withValue: 1)
    }

    /// Waits up to `timeout` for the loop to take the image.
    func wait(timeout: Duration) -> StoreImage? {
        let seconds = PostgresReplicatedLog.seconds(timeout)
        guard done.lock(whenValue: 1, timeoutSeconds: seconds) else { return nil }
        done.unlock()
        return result.withLockedValue { $0 }
    }
}
