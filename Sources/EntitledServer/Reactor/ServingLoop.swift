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
/// the log once for every write read this turn (`GroupCommit`); then write the answers that waited, one
/// `write` per connection, or one `io_uring_enter` for all of them (`LoopRing`).
final class ServingLoop: @unchecked Sendable {
    let index: Int
    /// This loop's counters: written on its thread only.
    let statistics: LoopStatistics
    let epoll: Epoll
    /// Whether this loop receives and sends through an io_uring (`LoopRing`, set when its thread starts;
    /// read on it): a turn's receives and sends go in one system call each. Without one (the kernel
    /// refused it, or `ServerConfiguration.usesIoUring` is off) each connection reads and sends its own.
    private(set) var hasRing = false
    /// The most events one `epoll_wait` reports.
    static let eventCapacity = 256

    /// An eventfd other threads write to wake the loop when they post a task.
    private let wakeDescriptor: Int32
    /// How long the loop keeps polling once it has run out of work, before it sleeps (adapted each time).
    private var poll: AdaptivePoll
    let logger: Logger

    // Loop thread only.
    /// Whether the loop serves, drains to stop, or stops at the end of this turn.
    var phase = Phase.serving
    /// The connections by descriptor.
    var connections: [ServedConnection?] = []
    var listeners: [Int32: ListeningSocket] = [:]
    private var toFlush: [ServedConnection] = []
    /// `toFlush`'s spare buffer, swapped in while flushing: copying the array and then emptying it would
    /// allocate a new buffer every turn (measured: one malloc per round trip).
    private var flushing: [ServedConnection] = []
    /// A single server's group commit of this loop's writes; `nil` on a node of a cluster, whose write
    /// answers wait for nothing of the loop's (`ReplicatedWriteBackend`).
    let groupCommit: GroupCommit?
    /// Connections with lines left unanswered by the per-turn cap, and the spare buffer.
    private var toResume: [ServedConnection] = []
    private var resuming: [ServedConnection] = []
    /// When this turn began (monotonic milliseconds): one clock read a turn dates every connection's
    /// activity for the idle timeout.
    private(set) var turnStarted: UInt64 = coarseMonotonicMilliseconds()
    /// Milliseconds without a byte from a client after which its connection is closed; 0: never.
    let idleTimeoutMilliseconds: UInt64
    /// With authentication: milliseconds a connection may stay unauthenticated; 0: never closed for it.
    let authenticationTimeoutMilliseconds: UInt64
    /// Whether connections are swept at all (either timeout set).
    private let sweepsConnections: Bool
    private var running: [() -> Void] = []
    /// Run once, right after the writes of the current turn were committed (see `afterCurrentTurn`).
    private var afterCommit: [() -> Void] = []
    /// Spare buffers for the answers of this loop's writes that wait for the log.
    var answerBuffers = AnswerBufferPool()
    /// The first loop's timer of `expired` pushes; `nil` on the others.
    private var accessEnds: AccessEndTimer?
    /// Every deadline the loop keeps by the monotonic clock (parked reads, lingering connections, paused
    /// listeners, the sweep), soonest first.
    var deadlines = LoopDeadlines()

    // Any thread, under `postLock`.
    let postLock = NIOLock()
    nonisolated(unsafe) var posted: [() -> Void] = []
    nonisolated(unsafe) var isRunning = true
    nonisolated(unsafe) private var threadID: pthread_t?
    let exited = ConditionLock(value: false)

    /// Where accepted connections go, round robin (set once by the server before the loop starts).
    nonisolated(unsafe) var distribute: (Int32, ConnectionKind) -> Void = { _, _ in }
    /// Everything a connection needs that is the same for all of them.
    let context: ConnectionContext

    init(
        index: Int, context: ConnectionContext, statistics: LoopStatistics, busyPollNanoseconds: UInt64 = 0,
        idleTimeoutMilliseconds: UInt64 = 0, authenticationTimeoutMilliseconds: UInt64 = 0,
        longestCommitHoldNanoseconds: UInt64 = CommitHold.longest, logger: Logger
    ) throws(SocketError) {
        self.index = index
        self.statistics = statistics
        self.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        self.authenticationTimeoutMilliseconds = authenticationTimeoutMilliseconds
        self.sweepsConnections = idleTimeoutMilliseconds > 0 || authenticationTimeoutMilliseconds > 0
        self.poll = AdaptivePoll(limitNanoseconds: busyPollNanoseconds)
        self.context = context
        self.logger = logger
        groupCommit = context.processor.log.map { GroupCommit(log: $0, longestHoldNanoseconds: longestCommitHoldNanoseconds) }
        if index == 0 { accessEnds = AccessEndTimer() }
        self.epoll = try Epoll()
        wakeDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeDescriptor >= 0 else { throw SocketError(operation: "eventfd") }
        try epoll.add(wakeDescriptor, .readable)
    }

    deinit {
        close(wakeDescriptor)
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
                    phase = .stopping
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

    private func run() {
        // For `top -H` and /proc: an unnamed thread shows its creator's name (a Swift concurrency worker's).
        nameCurrentThread("entitled-loop\(index)")
        if sweepsConnections { deadlines.add(.sweepConnections, at: 0) }
        // Made here, and kept in this frame rather than in a property the turn would read each time: only
        // the thread that made a ring may submit to it.
        var ring: LoopRing?
        if context.usesIoUring {
            do {
                ring = try LoopRing(connectionsPerTurn: Self.eventCapacity)
                hasRing = true
                if index == 0 { logger.debug("receiving and sending through io_uring: one system call for each per loop turn") }
            } catch {
                if index == 0 { logger.notice("receiving and sending with one system call per connection", metadata: ["reason": "\(error)"]) }
            }
        }
        let events = UnsafeMutableBufferPointer<epoll_event>.allocate(capacity: Self.eventCapacity)
        defer { events.deallocate() }
        while !phase.isStopping {
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
                        ring.handle(connection, events: flags, turnStarted: turnStarted)
                    } else {
                        connection.handle(events: flags, turnStarted: turnStarted)
                    }
                }
            }
            if let ring, ring.hasReceives { ring.completeReceives(turnStarted: turnStarted) }
            runPostedTasks()
            accessEnds?.takeDueEnds(of: context.processor.store, tellingWatchersThrough: context.processor.watchHub, turnStarted: turnStarted)
            // Checked here, not in the functions: at one request per turn, the calls alone cost ~40 instructions.
            if let soonest = deadlines.soonest, soonest <= turnStarted { runDueDeadlines() }
            if !toResume.isEmpty { resumeConnections() }
            // Not held while a barrier waits for this turn's commit (`afterCurrentTurn`), nor while stopping.
            if let groupCommit, groupCommit.hasWaiting { groupCommit.endOfTurn(on: self, mustCommit: !afterCommit.isEmpty || !phase.isServing) }
            if !afterCommit.isEmpty { runAfterCommitTasks() }
            flushConnections(through: ring)
            if case .draining(let deadline) = phase {
                if connections.allSatisfy({ $0 == nil }) || monotonicMilliseconds() >= deadline { phase = .stopping }
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
        guard milliseconds != 0, let heldUntil = groupCommit?.heldUntil else {
            return epoll.wait(into: events, milliseconds: milliseconds)
        }
        let now = monotonicNanoseconds()
        guard heldUntil > now else { return epoll.wait(into: events, milliseconds: 0) }
        var nanoseconds = heldUntil - now
        if milliseconds > 0 { nanoseconds = min(nanoseconds, UInt64(milliseconds) * 1_000_000) }
        return epoll.wait(into: events, nanoseconds: nanoseconds)
    }

    private func waitTimeout() -> Int32 {
        // Work queued by this turn itself (an answer released while flushing, a task posted from this
        // thread, which does not wake the loop) is done at once.
        if !toFlush.isEmpty || groupCommit?.isDue == true || !toResume.isEmpty
            || postLock.withLock({ !posted.isEmpty })
        {
            return 0
        }
        var timeout: Int32 = -1
        if case .draining = phase { return 10 }  // look again soon whether every connection is done
        if let soonest = deadlines.soonest {
            // Timed from the turn's start rather than a fresh clock read: a few milliseconds late is fine.
            timeout = soonest > turnStarted ? Int32(min(soonest - turnStarted, 1000)) : 0
        }
        if let untilEnd = accessEnds?.millisecondsUntilNextEnd(of: context.processor.store, turnStarted: turnStarted) {
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

    /// `connection` read writes this turn whose answers wait for the log.
    func needsCommit(_ connection: ServedConnection) {
        guard let groupCommit else { preconditionFailure("a write waits for a commit on a backend that has none") }
        groupCommit.add(connection)
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

    /// Writes the answers of the connections that have some at the end of this turn: through `ring` in one
    /// system call when several do.
    private func flushConnections(through ring: LoopRing?) {
        while !toFlush.isEmpty {
            swap(&toFlush, &flushing)
            if let ring, flushing.count > 1 {  // one connection: a plain send, as for reads above
                ring.flush(flushing)
            } else {
                for connection in flushing {
                    connection.flush()
                }
            }
            flushing.removeAll(keepingCapacity: true)
        }
    }
}
