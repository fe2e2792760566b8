import EntitledCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO

/// The one worker of a node that talks to PostgreSQL: it owns the connection, follows what the other
/// nodes commit, and commits this node's writes in groups, one thing at a time.
///
/// It runs as one task that prefers the event loop of its own connections (`EventLoopTaskExecutor`):
/// PostgresNIO completes each statement on that loop, and the replicator goes on right there, without a
/// thread hop. Everything that changes the replica happens here, in the order the database committed it
/// (`+Following`, `+Group`); a group whose commit went unanswered is settled for certain before its
/// writers hear it failed (`+Fate`).
///
/// `@unchecked Sendable`: its mutable properties are touched only by that one task (`run`), one step at
/// a time; what others share with it is in `state`, under its lock.
final class Replicator: @unchecked Sendable {
    let eventLoop: any EventLoop

    /// The replica: every membership, as of the last committed change applied.
    let store: EntitlementStore
    /// The group of the replica's newest change: what the database's history must continue
    /// (`ClusterTables+History.swift`).
    var anchor: Int64
    /// The time the replica records and answers by (the database's).
    let clock: DatabaseClock
    /// When the database's clock was last read, and whether its offset was found past the warning bound.
    var lastClockReading: ContinuousClock.Instant?
    var clockWarned = false
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
    /// When this node last committed a group.
    var lastCommitAt: ContinuousClock.Instant?
    /// How long after its own commit a node that woke without writes waits before it catches up.
    static let followDelay: Duration = .milliseconds(2)
    /// How many writes the last group committed, and how long the next waits for that many (`gatherWrites`).
    var lastGroupSize = 0
    /// Whether PostgreSQL sends this node the other nodes' commit notifications now (`+Listening`).
    var listening = false
    /// This node's groups committed one after another since it last had no writes.
    var busyStreak = 0
    /// Measured with 45 connections over 3 nodes on 2 cores: groups of 7-8 writes without gathering (those
    /// answered came back just after the next group left), of 15 with it; 200 to 500 µs gave the most
    /// writes a second, 1 ms fewer (medians of 5 runs).
    let gatherWindow: Duration = .microseconds(500)

    init(
        store: EntitlementStore, anchor: Int64, clock: DatabaseClock, location: PostgresLocation, options: ClusterOptions, logger: Logger,
        eventLoop: any EventLoop, state: NIOLockedValueBox<ReplicaState>
    ) {
        self.store = store
        self.anchor = anchor
        self.clock = clock
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
            setListening(false)
        }
        finishUnresolved()
    }

    /// Listens for other nodes' commits and works on one connection, until it fails or the node stops.
    private func serve(_ connection: PostgresConnection) async throws {
        var tables = ClusterTables(connection: connection, schema: location.schema, logger: logger)
        tables.timeout = options.writeTimeout
        self.tables = tables
        backend = try await tables.backend()
        // The callback form of LISTEN: called on the connection's event loop, where the replicator runs (the
        // notification sequence took a task of its own and two thread hops a notification, about a tenth
        // of a busy node's time: every commit of every node notifies every node).
        let (store, state) = (store, state)
        let listener = connection.addListener(channel: tables.channel) { _, notification in
            // Our own commits come back too: those the replica already holds wake nobody.
            if let sequence = UInt64(notification.payload), sequence <= store.sequence { return }
            state.withLockedValue { $0.takeWaiter() }?.succeed()
        }
        defer { listener.stop() }
        // addListener sent LISTEN ahead of every statement that follows on this connection.
        setListening(true)
        busyStreak = 0
        // Before anything else on a connection: a failover since the history was last written (or a database
        // behind this replica) starts a new range of numbers, which catching up then meets.
        try await noteDatabase()
        try await readClock()
        try await settleUnresolved()
        try await catchUp()
        state.withLockedValue {
            $0.connected = true
            $0.lossLogged = false
            $0.lastError = nil
        }
        while !isStopping {
            if !unresolved.isEmpty { try await settleUnresolved() }
            if let last = lastClockReading, ContinuousClock.now - last >= Self.clockReadingInterval { try await readClock() }
            if state.withLockedValue({ !$0.queue.isEmpty }) {
                await gatherWrites()
                try await commitGroup()
                try await quietIfBusy()
                continue
            }
            takeImages()
            // Nobody tells a quiet node of other nodes' commits: it looks again after the delay.
            await waitForWork(upTo: listening ? options.pollInterval : Self.followDelay)
            // Right after a group, this node's writers are about to send their next writes, and the next
            // group's commit brings what the others committed meanwhile: a catch-up now would only delay
            // it by a round trip. A node whose writers went quiet catches up a moment later.
            // Other nodes' notifications wake it meanwhile: only writes (or the end of the delay) end the wait,
            // else a busy cluster's notifications made a catch-up after nearly every group (measured: 3,812
            // catch-ups for 6,131 groups at 45 connections over 3 nodes). A snapshot's image asked for ends it
            // too: `waitForWork` returns at once while one waits, and this would spin until the delay's end.
            if let last = lastCommitAt {
                let followAt = last + Self.followDelay
                while !isStopping, ContinuousClock.now < followAt, state.withLockedValue({ $0.queue.isEmpty && $0.captures.isEmpty }) {
                    await waitForWork(upTo: followAt - .now)
                }
            }
            if state.withLockedValue({ $0.queue.isEmpty }) {
                try await listenWhenIdle()
                try await catchUp()
            }
        }
    }

    /// Gives the writers the last group answered a moment to send their next writes, so that they join
    /// this group rather than make one of their own right after it: every group costs the database one
    /// serialised commit, so fewer, larger groups take more writes. Waits only while fewer writes are
    /// queued than the last group held, and at most `gatherWindow`.
    private func gatherWrites() async {
        guard lastGroupSize > 1, gatherWindow > .zero else { return }
        let target = min(lastGroupSize, options.maximumGroupSize)
        let waits = state.withLockedValue { state -> Bool in
            guard state.queue.count < target else { return false }
            // Woken once, when the last of them arrives (or at the window's end), not by each (a wake-up
            // kept from before is for writes already queued).
            state.wakeThreshold = target
            state.signaled = false
            return true
        }
        guard waits else { return }
        await waitForWork(upTo: gatherWindow)
        state.withLockedValue { $0.wakeThreshold = 1 }
    }

    /// Returns at the next wake-up (at once if one came while busy), or after `limit`.
    private func waitForWork(upTo limit: Duration) async {
        let promise = eventLoop.makePromise(of: Void.self)
        let busy = state.withLockedValue { state -> Bool in
            if state.signaled || state.queue.count >= state.wakeThreshold || !state.captures.isEmpty || state.stopping {
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
        try? await promise.futureResult.value()
        timer.cancel()
    }

    private func sleep(for duration: Duration) async {
        try? await eventLoop.scheduleTask(in: .nanoseconds(ClusterTables.nanoseconds(duration))) {}.futureResult.value()
    }

    /// Gives waiting snapshots their image: between groups, the replica holds only committed changes.
    private func takeImages() {
        let captures = state.withLockedValue { state in
            defer { state.captures = [] }
            return state.captures
        }
        guard !captures.isEmpty else { return }
        let image = store.image().withoutErasedMemberships()
        for capture in captures { capture.fulfil(image, anchor: anchor) }
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
            write.complete(.failure(WriteFailure(.databaseLost(cause: reason))))
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
