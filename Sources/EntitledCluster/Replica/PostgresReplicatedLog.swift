import EntitledCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO

/// A node's replica of the cluster's store, and its way of writing into it: the `ReplicatedLog` that
/// the server writes through in cluster mode (Protocol/CLUSTER.md).
///
/// Writes are queued here and committed by the `Replicator`, which owns the connection to PostgreSQL and
/// does everything that touches the order of changes, one thing at a time. Checks never wait for any of
/// it: they read `store`, which only ever holds committed changes.
public final class PostgresReplicatedLog: ReplicatedLog, Sendable {
    /// The replica: every membership, as of `appliedSequence`.
    public let store: EntitlementStore
    public let location: PostgresLocation
    public let options: ClusterOptions
    let logger: Logger
    let state: NIOLockedValueBox<ReplicaState>
    /// The event loop of the replicator and of its connections.
    let eventLoop: any EventLoop
    /// The time the replica records and answers by: the database's.
    let clock: DatabaseClock
    private let replicator: Replicator
    private let running = NIOLockedValueBox<(task: Task<Void, Never>?, sweeper: RepeatedTask?)>((nil, nil))

    init(
        store: EntitlementStore, anchor: Int64, clock: DatabaseClock, database: DatabaseIdentity?, location: PostgresLocation,
        options: ClusterOptions, logger: Logger, eventLoop: any EventLoop, known: UInt64, snapshot: UInt64, marks: UInt64
    ) {
        self.store = store
        self.clock = clock
        self.location = location
        self.options = options
        self.logger = logger
        self.eventLoop = eventLoop
        var initial = ReplicaState()
        initial.knownSequence = known
        initial.snapshotSequence = snapshot
        initial.lastContact = .now
        initial.connected = true
        initial.database = database
        initial.historyMarks = marks
        let state = NIOLockedValueBox(initial)
        self.state = state
        replicator = Replicator(
            store: store, anchor: anchor, clock: clock, location: location, options: options, logger: logger, eventLoop: eventLoop, state: state
        )
    }

    // MARK: ReplicatedLog

    public func submit(_ write: StoreWrite, completion: @escaping @Sendable (Result<AppliedWrite, WriteFailure>) -> Void) {
        let pending = PendingWrite(write: write, deadline: .now + options.writeTimeout, completion: completion)
        let (refusal, waiter) = state.withLockedValue { state -> (WriteFailure.Cause?, EventLoopPromise<Void>?) in
            if state.stopping { return (.nodeStopping, nil) }
            // Writes are refused until the database is back; checks still answer.
            if !state.connected { return (.databaseUnreachable(lastError: state.lastError), nil) }
            state.queue.append(pending)
            return (nil, state.queue.count >= state.wakeThreshold ? state.takeWaiter() : nil)
        }
        if let refusal { pending.complete(.failure(WriteFailure(refusal))) }
        waiter?.succeed()
    }

    public func setObserver(_ observer: any ReplicaObserver) {
        state.withLockedValue { $0.observer = observer }
    }

    public var replicationStatus: ReplicationStatus {
        let applied = store.sequence
        let clockReading = clock.reading
        return state.withLockedValue { state in
            var status = ReplicationStatus(
                source: location.description, node: options.nodeName, connected: state.connected,
                writable: state.connected && !state.stopping,
                appliedSequence: applied, knownSequence: max(state.knownSequence, applied),
                secondsSinceContact: state.lastContact.map { ClusterTables.seconds(ContinuousClock.now - $0) },
                snapshotSequence: state.snapshotSequence, groupsCommitted: state.groupsCommitted,
                writesCommitted: state.writesCommitted, groupsFailed: state.groupsFailed, reconnects: state.reconnects,
                changesReplicated: state.changesReplicated, lastError: state.lastError, groupsRedecided: state.groupsRedecided,
                listening: state.listening, catchUps: state.catchUps
            )
            status.database = state.database?.description
            status.divergences = state.divergences
            status.lastDivergence = state.lastDivergence
            status.historyMarks = state.historyMarks
            status.reloads = state.reloads
            status.withholdingReads = state.withholdingReads
            status.clockOffsetSeconds = clockReading?.offsetSeconds
            status.clockUncertaintySeconds = clockReading?.uncertaintySeconds
            return status
        }
    }

    /// Wakes the replicator (a snapshot waits for an image).
    func signal() {
        state.withLockedValue { $0.takeWaiter() }?.succeed()
    }

    // MARK: Running

    /// Starts the replicator on `connection` (the one `open` used) and the sweeper that answers writes
    /// whose time is up.
    func start(on connection: PostgresConnection) {
        let replicator = self.replicator
        let task = Task(executorPreference: EventLoopTaskExecutor(eventLoop)) { await replicator.run(first: connection) }
        let sweeper = eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(50), delay: .milliseconds(50)) { [self] _ in
            sweepExpiredWrites()
        }
        running.withLockedValue { $0 = (task, sweeper) }
    }

    /// Stops taking writes, answers the queued ones `unavailable`, and ends the replicator and its
    /// connection. A group being committed is finished first (its writers hear its outcome).
    public func shutdown() async {
        let (queued, waiter) = state.withLockedValue { state -> ([PendingWrite], EventLoopPromise<Void>?) in
            state.stopping = true
            defer { state.queue = [] }
            return (state.queue, state.takeWaiter())
        }
        for write in queued { write.complete(.failure(WriteFailure(.nodeStopping))) }
        waiter?.succeed()
        let (task, sweeper) = running.withLockedValue { $0 }
        await task?.value
        sweeper?.cancel()
    }

    /// Answers the writes whose time ran out: queued ones were never decided (nothing happened); those
    /// of a group whose COMMIT went unanswered may have committed, and are told so.
    private func sweepExpiredWrites() {
        let now = ContinuousClock.now
        let (expired, unknown, lastError) = state.withLockedValue { state -> ([PendingWrite], [PendingWrite], String?) in
            var expired: [PendingWrite] = []
            if let oldest = state.queue.first, oldest.deadline <= now {
                state.queue.removeAll { write in
                    guard write.deadline <= now else { return false }
                    expired.append(write)
                    return true
                }
            }
            var unknown: [PendingWrite] = []
            if !state.undecidedFates.isEmpty {
                state.undecidedFates.removeAll { write in
                    guard write.deadline <= now else { return false }
                    unknown.append(write)
                    return true
                }
            }
            // A group held up past its writers' deadline, in whatever way: they may have been made.
            unknown += state.inFlight.lazy.filter { $0.deadline <= now && !$0.isAnswered }
            return (expired, unknown, state.lastError)
        }
        let timeout = ClusterTables.seconds(options.writeTimeout)
        for write in expired { write.complete(.failure(WriteFailure(.notTakenInTime(seconds: timeout, lastError: lastError)))) }
        for write in unknown { write.complete(.failure(WriteFailure(.commitNotConfirmedInTime(seconds: timeout, lastError: lastError)))) }
    }

    /// Opens a connection on `eventLoop`, with the deadline `options.connectTimeout`, and errors that name
    /// what to fix.
    static func connect(
        to location: PostgresLocation, options: ClusterOptions, on eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any(), logger: Logger
    ) async throws(ClusterError) -> PostgresConnection {
        let configuration = try location.connectionConfiguration(connectTimeout: options.connectTimeout)
        do {
            return try await PostgresConnection.connect(on: eventLoop, configuration: configuration, id: 1, logger: logger)
        } catch {
            let failure = DatabaseFailure(error)
            if failure.isAuthentication {
                throw .connection("the database at \(location) refused the user \(location.user): wrong password, or no such role (\(failure))")
            }
            if failure.isMissingDatabase {
                throw .connection("the database server at \(location) has no database \(location.database): create it (createdb \(location.database)) or name another in --postgres")
            }
            throw .connection("cannot connect to the database at \(location): \(failure)")
        }
    }

    static func seconds(_ duration: Duration) -> Double { ClusterTables.seconds(duration) }
}
