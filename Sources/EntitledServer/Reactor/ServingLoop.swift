import CEpoll
import EntitledCore
import EntitledStorage
import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One event loop: a thread that waits on an epoll set and serves the connections given to it, start to
/// finish, on that thread.
///
/// Hand-written rather than SwiftNIO's `SelectableEventLoop` because it was measured not to keep up on
/// the check path: on this project's 2-core machine, a SwiftNIO server whose handler answered every line
/// with a constant (no decoding, no store) reached 0.89–0.91x Redis's rate at 50 connections without
/// pipelining, while this loop with the same constant answer reached 1.03–1.05x (`entitled-bench checks`,
/// medians of 5 runs; see the README's Performance section). The difference is per-event work in the
/// channel pipeline (promises, handler contexts, pending-write bookkeeping, reference counting), which
/// a line protocol answered in place does not need.
///
/// A turn is what Redis does between two `epoll_wait`s: read every ready connection once and answer what
/// it read (written at once when no answer waits, see `ServedConnection`); run tasks other threads posted
/// (a connection handed over by the accepting loop, a log acknowledgement, a snapshot's answer); commit
/// the log once for every write read this turn (group commit, no thread hop); then write the answers
/// that waited, one `write` per connection.
final class ServingLoop: @unchecked Sendable {
    let index: Int
    /// This loop's counters: written on its thread only.
    let statistics: LoopStatistics
    private let epoll: Epoll
    /// Where a turn's answers are sent from in one system call; `nil` where the kernel refused a ring (or
    /// `ServerConfiguration.usesIoUring` is off): then each connection sends its own.
    var ring: SubmissionRing?
    /// Whether this loop sends through a ring (read on the loop's thread).
    var hasRing: Bool { ring != nil }
    /// Where the ring receives into: one slot per connection epoll reported readable this turn.
    let receiveArena = UnsafeMutableRawBufferPointer.allocate(
        byteCount: ServingLoop.eventCapacity * ServingLoop.receiveSlotSize, alignment: 64
    )
    /// The connections whose receive is queued in the ring this turn, by tag.
    var receiving: [ServedConnection] = []
    /// The most events one `epoll_wait` reports.
    static let eventCapacity = 256
    /// A ring receive's most bytes: a turn's request lines of one connection fit (about 60 bytes a check);
    /// a connection that fills it reads the rest at once with plain reads.
    static let receiveSlotSize = 4096

    /// An eventfd other threads write to wake the loop when they post a task.
    private let wakeDescriptor: Int32
    /// How long the loop keeps polling once it has run out of work, before it sleeps (adapted each time).
    private var poll: AdaptivePoll
    private let logger: Logger

    // Loop thread only.
    private var connections: [ServedConnection?] = []
    private var listeners: [Int32: ListeningSocket] = [:]
    private var toFlush: [ServedConnection] = []
    private var toCommit: [ServedConnection] = []
    /// `toFlush`'s spare buffer, swapped in while flushing: copying the array and then emptying it would
    /// allocate a new buffer every turn (measured: one malloc per round trip).
    var flushing: [ServedConnection] = []
    /// `toCommit`'s spare buffer, swapped in while committing.
    private var committing: [ServedConnection] = []
    /// How many connections this loop's commits have waited for lately: a moving average over its turns
    /// that committed, which tells a lone writer (about 1) from many (see `commitWrites`).
    private var recentWaitingConnections = 1.0
    /// A commit is with another thread (the log's writer) and not answered yet: the connections that read
    /// writes meanwhile wait in `toCommit` until it is, then go in one commit. One at a time, because each
    /// costs two thread wake-ups (there and back): handed over every turn, under load they cost more than
    /// the syncs they saved (measured at 50 connections: 10,000 a second, 3 µs more CPU per write).
    private var commitOutstanding = false
    /// After a handed-off commit of many connections came back: the next waits until they are back, for a
    /// while (see `CommitHold`).
    private var commitHold: CommitHold?
    /// When the commit out with the log's writer was asked for (monotonic nanoseconds), which times the hold.
    private var commitAskedAt: UInt64 = 0
    private let longestCommitHoldNanoseconds: UInt64
    /// Connections with lines left unanswered by the per-turn cap, and the spare buffer.
    private var toResume: [ServedConnection] = []
    private var resuming: [ServedConnection] = []
    /// When this turn began (monotonic milliseconds): one clock read a turn dates every connection's
    /// activity for the idle timeout.
    private(set) var turnStarted: UInt64 = coarseMonotonicMilliseconds()
    /// Milliseconds without a byte from a client after which its connection is closed; 0: never.
    private let idleTimeoutMilliseconds: UInt64
    /// With authentication: milliseconds a connection may stay unauthenticated; 0: never closed for it.
    private let authenticationTimeoutMilliseconds: UInt64
    /// Whether connections are swept at all (either timeout set).
    private let sweepsConnections: Bool
    private var running: [() -> Void] = []
    /// Run once, right after the writes of the current turn were committed (see `afterCurrentTurn`).
    private var afterCommit: [() -> Void] = []
    /// Spare buffers for the answers of this loop's writes that wait for the log.
    var answerBuffers = AnswerBufferPool()
    /// Whether more access ends were due than the last turn took (`ServingLoop+AccessEnds.swift`).
    var accessEndsPending = false
    /// The store's next access end as last read, and the monotonic moment it falls due by the store's
    /// clock then: a turn reads the clock again only when that moment has come or the next end moved.
    var accessEndWatch = (next: Int64.max, dueAt: UInt64.max)
    /// Every deadline the loop keeps by the monotonic clock (parked reads, lingering connections, paused
    /// listeners, the sweep), soonest first.
    private var deadlines = LoopDeadlines()
    private var stopping = false
    /// While stopping gracefully: when the loop stops even if connections still have work (monotonic ms).
    private var drainDeadline: UInt64?

    // Any thread, under `postLock`.
    private let postLock = NIOLock()
    nonisolated(unsafe) private var posted: [() -> Void] = []
    nonisolated(unsafe) private var isRunning = true
    nonisolated(unsafe) private var threadID: pthread_t?
    private let exited = ConditionLock(value: false)

    /// Where accepted connections go, round robin (set once by the server before the loop starts).
    nonisolated(unsafe) var distribute: (Int32, ConnectionKind) -> Void = { _, _ in }
    /// Everything a connection needs that is the same for all of them.
    let context: ConnectionContext

    init(
        index: Int, context: ConnectionContext, statistics: LoopStatistics, busyPollNanoseconds: UInt64 = 0,
        idleTimeoutMilliseconds: UInt64 = 0, authenticationTimeoutMilliseconds: UInt64 = 0,
        longestCommitHoldNanoseconds: UInt64 = CommitHold.longest, logger: Logger
    ) throws(SocketError) {
        self.longestCommitHoldNanoseconds = longestCommitHoldNanoseconds
        self.index = index
        self.statistics = statistics
        self.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        self.authenticationTimeoutMilliseconds = authenticationTimeoutMilliseconds
        self.sweepsConnections = idleTimeoutMilliseconds > 0 || authenticationTimeoutMilliseconds > 0
        self.poll = AdaptivePoll(limitNanoseconds: busyPollNanoseconds)
        self.context = context
        self.logger = logger
        self.epoll = try Epoll()
        wakeDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeDescriptor >= 0 else { throw SocketError(operation: "eventfd") }
        try epoll.add(wakeDescriptor, .readable)
    }

    deinit {
        close(wakeDescriptor)
        receiveArena.deallocate()
    }

    // MARK: Any thread

    /// Starts the loop's thread.
    func start() {
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { raw in
            let loop = Unmanaged<ServingLoop>.fromOpaque(raw!).takeRetainedValue()
            loop.run()
            return nil
        }, box.toOpaque())
        precondition(created == 0, "cannot start an event loop thread: error \(created)")
        postLock.withLock { threadID = thread }
        pthread_detach(thread)
    }

    /// Runs `task` on the loop's thread after the current turn's I/O; returns `false` when the loop has
    /// stopped (the task is dropped).
    ///
    /// Only the task that finds nothing posted before it wakes the loop: the loop runs every posted task
    /// once woken, and one that is awake looks at them before it sleeps again. (A cluster node answers a
    /// group of writes with one task each: a wake-up, a system call and a thread switch per answer were
    /// most of what a group's answers cost.)
    @discardableResult
    func execute(_ task: @escaping () -> Void) -> Bool {
        let (accepted, first) = postLock.withLock { () -> (Bool, Bool) in
            guard isRunning else { return (false, false) }
            posted.append(task)
            return (true, posted.count == 1)
        }
        if accepted && first && !inLoop { wake() }
        return accepted
    }

    /// Whether the caller runs on this loop's thread.
    var inLoop: Bool {
        guard let threadID = postLock.withLock({ threadID }) else { return false }
        return pthread_equal(threadID, pthread_self()) != 0
    }

    /// Closes every connection and listener of this loop and ends its thread; returns once it has.
    func stopAndWait() {
        beginStopping(drainingFor: 0)
        waitUntilStopped()
    }

    /// Asks the loop to stop: at once, or first closing its listeners and letting every connection finish
    /// what it has read, for at most `milliseconds` (see `ServedConnection.drain`). Returns at once.
    func beginStopping(drainingFor milliseconds: UInt64) {
        let running = postLock.withLock { () -> Bool in
            posted.append { [unowned self] in
                if milliseconds == 0 {
                    stopping = true
                } else {
                    beginDraining(until: monotonicMilliseconds() + milliseconds)
                }
            }
            return isRunning
        }
        if running { wake() }
    }

    /// Returns once the loop's thread has ended.
    func waitUntilStopped() {
        guard postLock.withLock({ threadID != nil }) else { return }  // never started
        exited.lock(whenValue: true)
        exited.unlock()
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, 8)
    }

    // MARK: Loop thread

    /// Starts watching a listening socket (loop 0 accepts for every loop).
    func listen(on listener: ListeningSocket) {
        do {
            try epoll.add(listener.descriptor, .readable)
            listeners[listener.descriptor] = listener
        } catch {
            logger.error("cannot watch a listening socket", metadata: ["error": "\(error)"])
        }
    }

    /// Takes over an accepted connection's socket.
    func adopt(_ descriptor: Int32, kind: ConnectionKind) {
        guard !stopping, drainDeadline == nil else {
            close(descriptor)
            context.onClose(kind)  // counted when it was admitted
            return
        }
        var tls: TLSSession?
        if kind == .tcp, let server = context.tls {
            do {
                tls = try TLSSession(context: server.context)
            } catch {
                logger.warning("cannot start TLS for a connection", metadata: ["error": "\(error)"])
                close(descriptor)
                context.onClose(kind)
                return
            }
        }
        let connection = ServedConnection(descriptor: descriptor, kind: kind, loop: self, tls: tls)
        do {
            try epoll.add(descriptor, .readable)
        } catch {
            logger.debug("cannot watch an accepted connection", metadata: ["error": "\(error)"])
            tls?.discard()
            close(descriptor)
            context.onClose(kind)
            return
        }
        let slot = Int(descriptor)
        if slot >= connections.count {
            connections.append(contentsOf: repeatElement(nil, count: max(slot + 1 - connections.count, 64)))
        }
        connections[slot] = connection
    }

    private func run() {
        // For `top -H` and /proc: an unnamed thread shows its creator's name (a Swift concurrency worker's).
        nameCurrentThread("entitled-loop\(index)")
        if sweepsConnections { deadlines.add(.sweepConnections, at: 0) }
        if context.usesIoUring {
            // Made here: only the thread that made a ring may submit to it.
            do {
                ring = try SubmissionRing()
            } catch {
                if index == 0 { logger.notice("receiving and sending with one system call per connection", metadata: ["reason": "\(error)"]) }
            }
        }
        if index == 0, ring != nil { logger.debug("receiving and sending through io_uring: one system call for each per loop turn") }
        let capacity = Self.eventCapacity
        receiving.reserveCapacity(capacity)
        let events = UnsafeMutableBufferPointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        while !stopping {
            let ready = waitForEvents(into: events)
            turnStarted = coarseMonotonicMilliseconds()
            for offset in 0..<ready {
                let descriptor = cepoll_event_fd(&events[offset])
                let flags = cepoll_event_flags(&events[offset])
                if descriptor == wakeDescriptor {
                    var count: UInt64 = 0
                    _ = read(wakeDescriptor, &count, 8)
                } else if let listener = listeners[descriptor] {
                    accept(from: listener)
                } else if Int(descriptor) < connections.count, let connection = connections[Int(descriptor)] {
                    // The ring pays off when it batches several connections; a turn that serves one (a lone
                    // client) reads it with one plain `read`, which costs less than a ring submission
                    // (measured at 1 x 1: p50 57.5 against 58.7 µs, three runs each).
                    if let ring, ready > 1 {
                        let slot = receiveSlot(receiving.count)
                        if connection.handleQueueingReceive(events: flags, in: ring, into: slot, tag: UInt64(receiving.count), turnStarted: turnStarted) {
                            receiving.append(connection)
                        }
                    } else {
                        connection.handle(events: flags, turnStarted: turnStarted)
                    }
                }
            }
            if !receiving.isEmpty { completeReceives() }
            runPostedTasks()
            takeDueAccessEnds()
            // Checked here, not in the functions: at one request per turn, the calls alone cost ~40 instructions.
            if let soonest = deadlines.soonest, soonest <= turnStarted { runDueDeadlines() }
            if !toResume.isEmpty { resumeConnections() }
            commitWrites()
            if !afterCommit.isEmpty { runAfterCommitTasks() }
            flushConnections()
            if let deadline = drainDeadline {
                if connections.allSatisfy({ $0 == nil }) || monotonicMilliseconds() >= deadline { stopping = true }
            }
        }
        shutDown()
    }

    /// Waits for the next events. With a busy poll, a loop that would sleep asks again and again, without
    /// sleeping, until something is ready or the poll's time (`AdaptivePoll.window`) is up: a request
    /// arriving meanwhile costs no thread wake-up, which on a virtual machine is most of a lone client's
    /// round trip. How long the loop then slept teaches the window.
    private func waitForEvents(into events: UnsafeMutableBufferPointer<epoll_event>) -> Int {
        let timeout = waitTimeout()
        guard timeout != 0, poll.limit > 0 else { return sleep(into: events, milliseconds: timeout) }
        if poll.window > 0 {
            let started = monotonicNanoseconds()
            repeat {
                let ready = epoll.wait(into: events, milliseconds: 0)
                if ready > 0 { return ready }
            } while monotonicNanoseconds() &- started < poll.window
        }
        let sleepStarted = monotonicNanoseconds()
        let ready = sleep(into: events, milliseconds: waitTimeout())
        poll.slept(nanoseconds: monotonicNanoseconds() &- sleepStarted, woken: ready > 0)
        return ready
    }

    /// Waits for events for at most `milliseconds` (-1: no limit), and no later than a held commit's
    /// deadline when writes wait for it.
    private func sleep(into events: UnsafeMutableBufferPointer<epoll_event>, milliseconds: Int32) -> Int {
        guard milliseconds != 0, let hold = commitHold, !toCommit.isEmpty, !commitOutstanding else {
            return epoll.wait(into: events, milliseconds: milliseconds)
        }
        let now = monotonicNanoseconds()
        guard hold.deadline > now else { return epoll.wait(into: events, milliseconds: 0) }
        var nanoseconds = hold.deadline - now
        if milliseconds > 0 { nanoseconds = min(nanoseconds, UInt64(milliseconds) * 1_000_000) }
        return epoll.wait(into: events, nanoseconds: nanoseconds)
    }

    private func waitTimeout() -> Int32 {
        // Work queued by this turn itself (an answer released while flushing, a task posted from this
        // thread, which does not wake the loop) is done at once.
        if !toFlush.isEmpty || (!toCommit.isEmpty && !commitOutstanding && commitHold == nil) || !toResume.isEmpty
            || postLock.withLock({ !posted.isEmpty })
        {
            return 0
        }
        var timeout: Int32 = -1
        if drainDeadline != nil { return 10 }  // draining: look again soon whether every connection is done
        if let soonest = deadlines.soonest {
            // Timed from the turn's start rather than a fresh clock read: a few milliseconds late is fine.
            timeout = soonest > turnStarted ? Int32(min(soonest - turnStarted, 1000)) : 0
        }
        if let untilEnd = millisecondsUntilNextAccessEnd() {
            timeout = timeout < 0 ? untilEnd : min(timeout, untilEnd)
        }
        return timeout
    }

    /// Runs `task` on the loop's thread once this turn's writes are committed. Call it on the loop's thread.
    func afterCurrentTurn(_ task: @escaping () -> Void) {
        afterCommit.append(task)
    }

    private func runAfterCommitTasks() {
        let tasks = afterCommit
        afterCommit.removeAll()
        for task in tasks { task() }
    }

    private func runPostedTasks() {
        while true {
            postLock.withLock { swap(&posted, &running) }
            if running.isEmpty { return }
            for task in running { task() }
            running.removeAll(keepingCapacity: true)
        }
    }

    /// `connection` holds a `minSeq` read (its parking `number`) that stops waiting at `deadline`
    /// (monotonic milliseconds): then `ServedConnection.sequenceWaitExpired(number:)` answers it.
    func noteParked(_ connection: ServedConnection, number: UInt64, until deadline: UInt64) {
        deadlines.add(.expireParkedRead(connection, number: number), at: deadline)
    }

    /// `connection` has shut its write side and waits for its client to close, until `deadline`
    /// (monotonic milliseconds; see `ServedConnection.linger`).
    func noteLingering(_ connection: ServedConnection, until deadline: UInt64) {
        deadlines.add(.closeLingering(connection), at: deadline)
    }

    /// Does what is due by this turn's clock. An action may add a deadline (an expired read's answer can
    /// park the next line): it is taken in this pass only if it is due too.
    private func runDueDeadlines() {
        while let action = deadlines.nextDue(by: turnStarted) {
            switch action {
            case .expireParkedRead(let connection, let number):
                // Answered already (woken by its change) or closed: nothing to do at the deadline.
                guard !connection.isClosed, connection.parked?.number == number else { continue }
                connection.sequenceWaitExpired(number: number)
            case .closeLingering(let connection):
                if !connection.isClosed { connection.close() }
            case .resumeListeners:
                for descriptor in listeners.keys { try? epoll.add(descriptor, .readable) }
            case .sweepConnections:
                closeIdleConnectionsIfDue()
            }
        }
    }

    /// Graceful stop: no new connections, and every connection answers what it has read, then closes.
    private func beginDraining(until deadline: UInt64) {
        drainDeadline = deadline
        for listener in listeners.values {
            epoll.remove(listener.descriptor)
            listener.close()
        }
        listeners.removeAll()
        for case let connection? in connections { connection.drain() }
    }

    private func shutDown() {
        let remaining = postLock.withLock { () -> [() -> Void] in
            isRunning = false
            defer { posted.removeAll() }
            return posted
        }
        for task in remaining { task() }
        for listener in listeners.values {
            epoll.remove(listener.descriptor)
            listener.close()
        }
        listeners.removeAll()
        for case let connection? in connections {
            connection.close()
        }
        connections.removeAll()
        exited.lock()
        exited.unlock(withValue: true)
    }

    // MARK: Accepting

    private func accept(from listener: ListeningSocket) {
        // Up to a batch per turn, so a connection storm cannot starve the connections already served.
        for _ in 0..<64 {
            let descriptor = cepoll_accept(listener.descriptor)
            if descriptor >= 0 {
                if listener.kind == .tcp {
                    var on: Int32 = 1
                    _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                }
                distribute(descriptor, listener.kind)
                continue
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO:
                return
            case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                // Out of descriptors or memory: the pending connection stays queued. Stop watching the
                // listeners for a moment rather than spin on them; they resume on their own.
                logger.warning(
                    "cannot accept connections: \(String(cString: strerror(errno))); pausing accepts for 100 ms"
                )
                pauseListeners()
                return
            default:
                logger.warning("accept failed", metadata: ["error": "\(String(cString: strerror(errno)))"])
                return
            }
        }
    }

    private func pauseListeners() {
        for descriptor in listeners.keys { epoll.remove(descriptor) }
        deadlines.add(.resumeListeners, at: monotonicMilliseconds() + 100)
    }

    // MARK: Connections' requests of the loop

    /// `connection` has answers to write at the end of this turn.
    func needsFlush(_ connection: ServedConnection) {
        toFlush.append(connection)
    }

    /// `connection` has complete lines the per-turn cap left unanswered: answer them next turn.
    func needsResume(_ connection: ServedConnection) {
        toResume.append(connection)
    }

    private func resumeConnections() {
        swap(&toResume, &resuming)
        for connection in resuming { connection.resume() }
        resuming.removeAll(keepingCapacity: true)
    }

    /// Closes, about once a second, the connections idle for longer than the idle timeout: no byte from
    /// the client, nothing in flight, no watch. Closed without a line: a line that answers no request
    /// would be taken by a pooled client for the answer to its next one.
    /// Also closes, under authentication, the connections that have not authenticated within the
    /// authentication timeout of being accepted (whether or not they send anything): places held by
    /// clients that never authenticate free up within that time.
    private func closeIdleConnectionsIfDue() {
        let timeouts: [UInt64] = [idleTimeoutMilliseconds, authenticationTimeoutMilliseconds].filter { $0 > 0 }
        let shortest: UInt64 = timeouts.min() ?? 1000
        deadlines.add(.sweepConnections, at: turnStarted + Swift.min(1000, Swift.max(10, shortest / 4)))
        var closed = 0
        var unauthenticated = 0
        for case let connection? in connections {
            if authenticationTimeoutMilliseconds > 0, !connection.hasAuthenticated,
                turnStarted &- connection.acceptedAt >= authenticationTimeoutMilliseconds
            {
                connection.close()
                unauthenticated += 1
            } else if idleTimeoutMilliseconds > 0, turnStarted &- connection.lastActivity >= idleTimeoutMilliseconds, connection.isIdle {
                connection.close()
                closed += 1
            }
        }
        if closed > 0 {
            statistics.record(.closedIdle, count: UInt64(closed))
            logger.info("closed idle connections", metadata: ["count": "\(closed)", "idleTimeoutMs": "\(idleTimeoutMilliseconds)"])
        }
        if unauthenticated > 0 {
            statistics.record(.closedIdle, count: UInt64(unauthenticated))
            logger.info(
                "closed connections that did not authenticate in time",
                metadata: ["count": "\(unauthenticated)", "authTimeoutMs": "\(authenticationTimeoutMilliseconds)"]
            )
        }
    }

    /// `connection` read writes this turn whose answers wait for the log.
    func needsCommit(_ connection: ServedConnection) {
        toCommit.append(connection)
    }

    func watch(_ connection: ServedConnection, _ interest: Epoll.Interest) -> Bool {
        epoll.modify(connection.descriptor, interest)
    }

    /// Applies reloaded tokens to this loop's connections (`ServedConnection.reauthorize(with:)`); returns
    /// how many lost their role. Runs on the loop's thread.
    func reauthorizeConnections(with tokens: AccessTokens) -> Int {
        var revoked = 0
        for case let connection? in connections where connection.reauthorize(with: tokens) { revoked += 1 }
        return revoked
    }

    func forget(_ connection: ServedConnection) {
        epoll.remove(connection.descriptor)
        let slot = Int(connection.descriptor)
        if slot < connections.count, connections[slot] === connection { connections[slot] = nil }
    }

    private func flushConnections() {
        while !toFlush.isEmpty {
            swap(&toFlush, &flushing)
            if let ring, flushing.count > 1 {  // one connection: a plain send, as for reads above
                flushThroughRing(ring)
            } else {
                for connection in flushing {
                    connection.flush()
                }
            }
            flushing.removeAll(keepingCapacity: true)
        }
    }

    /// Commits once for every write read this turn (and those that waited for a commit still out), like
    /// Redis's `beforeSleep`. If the commit is handed to the log's writer thread (several writers, or
    /// another loop writing the log at that moment), the answers are released when it calls back (group
    /// commit either way).
    private func commitWrites() {
        guard !toCommit.isEmpty, !commitOutstanding else { return }
        if let hold = commitHold {
            // Not held while a barrier waits for this turn's commit (`waitForCommittedTurns`: the log
            // resumes after a failure only once every loop asked about the writes it numbered), nor while
            // stopping.
            let mustCommit = !afterCommit.isEmpty || stopping || drainDeadline != nil
            guard mustCommit || hold.isOver(waiting: toCommit.count, now: monotonicNanoseconds()) else { return }
            commitHold = nil
        }
        let writes = context.processor.writes
        // Swapped with a spare, as `toFlush` is: copying the array and then emptying it allocated.
        swap(&toCommit, &committing)
        defer { committing.removeAll(keepingCapacity: true) }
        var newest: UInt64?
        for connection in committing {
            if let sequence = connection.answers.uncommittedSequence { newest = max(newest ?? 0, sequence) }
        }
        guard let through = newest else { return }
        // Writes read from now on wait for the next commit: none may join a run this one settles.
        for connection in committing { connection.answers.closeRun() }
        let unchecked = UncheckedConnections(committing)  // a copy: the callback may come later
        // A lone writer's commit is made on this thread (no hop to another and back in its round trip);
        // with several writing, the loop hands it over and serves on, since the connections not in this
        // group would otherwise wait out the sync. An average rather than this turn's count: under load,
        // turns of one write come between large ones, and syncing those here stalled the loop (measured
        // at 50 connections: more, smaller groups and a third more CPU per write).
        recentWaitingConnections += (Double(committing.count) - recentWaitingConnections) / 8
        let onThisThread = recentWaitingConnections < 1.5
        if !onThisThread { commitAskedAt = monotonicNanoseconds() }
        let settled = writes.commit(through: through, onThisThread: onThisThread) { [self] result in
            execute {
                self.commitOutstanding = false
                if case .success = result {
                    self.commitHold = CommitHold.after(
                        committed: unchecked.connections.count, waiting: self.toCommit.count,
                        askedAt: self.commitAskedAt, now: monotonicNanoseconds(), longest: self.longestCommitHoldNanoseconds
                    )
                }
                for connection in unchecked.connections { connection.committed(through: through, result: result) }
            }
        }
        if let settled {
            for connection in committing { connection.committed(through: through, result: settled) }
        } else {
            commitOutstanding = true
        }
    }
}

/// Connections handed to another thread and back to their own loop: only ever touched on that loop.
private struct UncheckedConnections: @unchecked Sendable {
    let connections: [ServedConnection]
    init(_ connections: [ServedConnection]) { self.connections = connections }
}

func monotonicMilliseconds() -> UInt64 {
    monotonicNanoseconds() / 1_000_000
}

/// The monotonic clock at the kernel tick's resolution (a few milliseconds): read without a system call
/// and cheaper than the precise clock, for the idle timeout, which is read once every loop turn.
func coarseMonotonicMilliseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
    return UInt64(now.tv_sec) * 1_000 + UInt64(now.tv_nsec) / 1_000_000
}

func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
