import EntitledCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO

/// The one worker of a node that talks to PostgreSQL: it owns the connection, follows what the other
/// nodes commit, and commits this node's writes in groups, one thing at a time.
///
/// An actor on the event loop of its own connection: PostgresNIO completes each statement on that loop,
/// and the replicator goes on right there, without a thread hop (`ClusterTables.query`). Everything that
/// changes the replica happens here, in the order the database committed it (`+Following`, `+Group`); a
/// group whose COMMIT went unanswered is settled for certain before its writers hear it failed (`+Fate`).
actor Replicator {
    nonisolated let eventLoop: any EventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { eventLoop.executor.asUnownedSerialExecutor() }

    /// The replica: every membership, as of the last committed change applied.
    let store: EntitlementStore
    let location: PostgresLocation
    let options: ClusterOptions
    let logger: Logger
    let state: NIOLockedValueBox<ReplicaState>
    /// The current connection's tables, and its server process (named in a group left unresolved).
    var tables: ClusterTables?
    var backend: DatabaseBackend?
    /// Groups whose COMMIT went unanswered, oldest first.
    var unresolved: [UnresolvedGroup] = []
    /// Random bits for new membership ids.
    var random = BufferedRandomNumberGenerator()

    init(store: EntitlementStore, location: PostgresLocation, options: ClusterOptions, logger: Logger, eventLoop: any EventLoop, state: NIOLockedValueBox<ReplicaState>) {
        self.store = store
        self.location = location
        self.options = options
        self.logger = logger
        self.eventLoop = eventLoop
        self.state = state
    }

    var isStopping: Bool { state.withLockedValue { $0.stopping } }

    /// Serves on `first`, then connects again with backoff whenever the connection fails, until the node
    /// stops.
    func run(first: PostgresConnection) async {
        var connection: PostgresConnection? = first
        var backoff = options.initialBackoff
        while !isStopping {
            if connection == nil {
                do {
                    connection = try await PostgresReplicatedLog.connect(to: location, options: options, on: eventLoop, logger: logger)
                    state.withLockedValue { $0.reconnects += 1 }
                    logger.notice("reconnected to the database", metadata: ["postgres": "\(location)"])
                } catch {
                    noteDisconnected(reason: "\(error)")
                    await sleep(for: backoff)
                    backoff = min(backoff * 2, options.maximumBackoff)
                    continue
                }
            }
            backoff = options.initialBackoff
            do {
                try await serve(connection!)
            } catch {
                if !isStopping { noteDisconnected(reason: "\(DatabaseFailure(error))") }
            }
            try? await connection?.close()
            connection = nil
            tables = nil
        }
        finishUnresolved(reason: "the node stopped before it learned whether its last group of writes committed")
    }

    /// Listens for other nodes' commits and works on one connection, until it fails or the node stops.
    private func serve(_ connection: PostgresConnection) async throws {
        var tables = ClusterTables(connection: connection, schema: location.schema, logger: logger)
        tables.timeout = options.writeTimeout
        self.tables = tables
        backend = try await tables.backend()
        // Not a child task: a notification sequence whose connection was cut does not always end, and a
        // task group would wait for it. It is cancelled, and ends with its connection.
        let (channel, store, state) = (tables.channel, store, state)
        let listener = Task {
            try? await connection.listen(on: channel) { notifications in
                for try await notification in notifications {
                    // Our own commits come back too: those the replica already holds wake nobody.
                    if let sequence = UInt64(notification.payload), sequence <= store.sequence { continue }
                    state.withLockedValue { $0.takeWaiter() }?.succeed()
                }
            }
        }
        defer { listener.cancel() }
        try await settleUnresolved()
        try await catchUp()
        state.withLockedValue {
            $0.connected = true
            $0.lossLogged = false
            $0.lastError = nil
        }
        while !isStopping {
            if !unresolved.isEmpty { try await settleUnresolved() }
            if state.withLockedValue({ !$0.queue.isEmpty }) {
                try await commitGroup()
                continue
            }
            takeImages()
            await waitForWork(upTo: options.pollInterval)
            if state.withLockedValue({ $0.queue.isEmpty }) { try await catchUp() }
        }
    }

    /// Returns at the next wake-up (at once if one came while busy), or after `limit`.
    private func waitForWork(upTo limit: Duration) async {
        let promise = eventLoop.makePromise(of: Void.self)
        let busy = state.withLockedValue { state -> Bool in
            if state.signaled || !state.queue.isEmpty || !state.captures.isEmpty || state.stopping {
                state.signaled = false
                return true
            }
            state.waiter = promise
            return false
        }
        if busy {
            promise.succeed()
            return
        }
        let state = self.state
        let timer = eventLoop.scheduleTask(in: .nanoseconds(ClusterTables.nanoseconds(limit))) {
            state.withLockedValue { $0.waiter = nil }
            promise.succeed()
        }
        try? await promise.futureResult.get()
        timer.cancel()
    }

    private func sleep(for duration: Duration) async {
        try? await eventLoop.scheduleTask(in: .nanoseconds(ClusterTables.nanoseconds(duration))) {}.futureResult.get()
    }

    /// Gives waiting snapshots their image: between groups, the replica holds only committed changes.
    private func takeImages() {
        let captures = state.withLockedValue { state in
            defer { state.captures = [] }
            return state.captures
        }
        guard !captures.isEmpty else { return }
        let image = store.image().withoutErasedMemberships()
        for capture in captures { capture.fulfil(image) }
    }

    /// Marks the node disconnected, and refuses the writes waiting for a group: none was decided, so
    /// none was made.
    func noteDisconnected(reason: String) {
        let (queued, logsLoss) = state.withLockedValue { state -> ([PendingWrite], Bool) in
            defer {
                state.connected = false
                state.lossLogged = true
                state.lastError = reason
                state.queue = []
            }
            return (state.queue, !state.lossLogged)
        }
        if logsLoss {
            logger.error("lost the database; checks go on from memory, writes are refused until it is back", metadata: ["reason": "\(reason)"])
        }
        for write in queued {
            write.complete(.failure(WriteFailure(.notMade, reason: "the database is unreachable (\(reason))")))
        }
    }

    /// The database told this node of `head`, a moment ago.
    func noteContact(head: UInt64) {
        state.withLockedValue { state in
            state.knownSequence = max(state.knownSequence, head)
            state.lastContact = .now
        }
    }
}
