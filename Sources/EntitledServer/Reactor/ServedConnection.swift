import CEpoll
import EntitledCore
import EntitledStorage
import EntitledWire
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One client connection, served on its loop's thread from accept to close.
///
/// Reading: one `read` of at most `readSize` bytes per loop turn; every complete line in the buffer is
/// answered in place, its answer appended to `answers` (an `AnswerQueue`). Writing: one `write` per read,
/// so a client that pipelines gets one system call for a whole batch. It happens right after the read when every answer
/// is ready, and at the end of the turn (`ServingLoop.flushConnections`) when one waits for the log's
/// group commit or a snapshot. Writing at once rather than after the turn's reads, as Redis does, lets
/// the client turn its answer round while the loop reads the other connections: at 50 connections without
/// pipelining, answers held to the end of the turn made the clients' next requests miss the next turn
/// in bursts, and the latency distribution had two humps (p99 690–753 µs against Redis's 639–734); written
/// at once it has one, and p99 fell to 501–551 µs (Redis 591–605) with 5% more throughput.
///
/// Answers leave in request order. A write's answer waits until its change is committed (a single
/// server's loop asks the log once per turn; a cluster node's write is answered when its group commits),
/// a snapshot's until it is written; answers to later requests queue behind it (`AnswerQueue`). On a cluster
/// node, whose writes reach the store only once committed, a read after a write of the same connection
/// waits until that write is answered (`+Parking`), so that it sees it; later writes do not wait (they
/// join the same group).
///
/// Backpressure: while more than `highWaterMark` bytes of answers wait for a client that does not read
/// them, the connection is not read, so such a client cannot grow the server's memory; reading resumes
/// below `lowWaterMark`.
final class ServedConnection {
    let descriptor: Int32
    let kind: ConnectionKind
    unowned let loop: ServingLoop

    /// Bytes read and not yet answered, cut into request lines (the last may still be arriving).
    var input: LineFramer
    /// The answers, in request order: those ready to write (`answers.ready`) and those that wait.
    var answers: AnswerQueue
    private var isQueuedForFlush = false
    var isQueuedForCommit = false
    private var isQueuedForResume = false
    /// Complete lines wait in `input` because the last turn answered `maximumRequestsPerTurn` of them:
    /// they are answered next turn, before anything more is read.
    private(set) var hasUnansweredLines = false
    /// When the client last sent something (the loop's coarse clock, milliseconds), for the idle timeout.
    private(set) var lastActivity: UInt64
    /// When the connection was taken (loop milliseconds): the authentication timeout counts from then.
    let acceptedAt: UInt64
    /// Whether an `auth` ever succeeded on it: the authentication timeout no longer applies.
    var hasAuthenticated = false
    /// `context.maximumRequestsPerTurn`, kept here: `context` is read through the unowned `loop`, whose
    /// strong retain and release cost about 25 instructions a read, once more per check.
    let maximumRequestsPerTurn: Int
    /// The loop's counters (kept here for the same reason).
    let statistics: LoopStatistics
    /// `context.processor`, kept here for the same reason: every line is answered through it.
    let processor: RequestProcessor
    /// `context.maximumLineLength`, kept here for the same reason: every line is measured against it.
    let maximumLineLength: Int
    /// `context.heldReads`, kept here for the same reason: every read looks at it (`+HeldReads`).
    let heldReads: LogProgress?
    /// Whether answers wait for the end of the loop turn, which sends every connection's through its
    /// io_uring in one system call (`LoopRing.flush`), rather than going at once.
    let sendsAtTurnEnd: Bool
    /// Writes submitted to a backend that applies them only once committed (a cluster's), not yet
    /// answered: a read waits for them.
    var unansweredWrites = 0
    /// The request that cannot be answered yet (see `+Parking`): every line after it stays in `input`,
    /// unread by the processor, until it is; the socket is not read meanwhile.
    var parked: ParkedRequest?
    /// What happened to the input while a request was parked, done once it is answered.
    var deferredEnd: DeferredEnd?
    /// Numbers each parking, so that a deadline set for an earlier one does nothing.
    var parkings: UInt64 = 0
    /// The client closed its side, or sent a line over the limit: close once every answer is out.
    private(set) var closeWhenAnswered = false
    /// A graceful stop: once every answer is written, `linger` rather than close at once.
    private var lingersWhenAnswered = false
    /// The write side is shut and what the client still sends is read and dropped, until it closes.
    private(set) var isLingering = false
    private(set) var isReading = true
    private var wantsWritable = false
    private(set) var isClosed = false

    /// The most one `read` takes: a turn's share of one connection.
    static let readSize = 16 * 1024
    static let highWaterMark = 64 * 1024
    /// How long one connection's requests may hold its loop in one turn before the others get theirs:
    /// 1 ms is about 2,000 checks, far more than a client pipelining `maximumRequestsPerTurn` cheap
    /// requests needs, while a client sending costly ones (a `customer` of a large subject, a check at
    /// an earlier moment) gets one or a few a turn, so another client's `ping` waits for at most about
    /// one such request and a slice per busy connection (OPERATIONS.md, "Limits").
    static let timeSliceNanoseconds: UInt64 = 1_000_000
    static let lowWaterMark = 32 * 1024

    /// What the connection may do, and whom its changes are attributed to (see `+Authentication`).
    var access: ConnectionAccess
    /// `auth` requests refused so far; at `ServedConnection.maximumFailedAuthentications` it is closed.
    var failedAuthentications = 0
    /// The token the connection authenticated with, so that a reload of the auth file can take its role
    /// away (token removed) or change it (role changed) at once. `nil` until an `auth` succeeds.
    var authenticatedToken: AccessToken?

    /// The connection's TLS, when the server has a certificate and this is a TCP connection; released on
    /// the loop's thread when the connection closes (its embedded event loop must not be freed elsewhere),
    /// or as soon as the client shows it speaks plain text (see `+TLS`).
    var tls: TLSSession?
    /// Until the first bytes are read: they show whether the client speaks the port's language (plain
    /// text or TLS), which `+TLS` checks once per connection, never per request.
    var awaitsFirstBytes = true

    init(descriptor: Int32, kind: ConnectionKind, loop: ServingLoop, tls: TLSSession? = nil) {
        self.descriptor = descriptor
        self.tls = tls
        self.kind = kind
        self.loop = loop
        self.access = loop.context.accessTokens == nil ? .open : .anonymous
        self.lastActivity = loop.turnStarted
        self.acceptedAt = loop.turnStarted
        self.maximumRequestsPerTurn = loop.context.maximumRequestsPerTurn
        self.statistics = loop.statistics
        self.processor = loop.context.processor
        self.maximumLineLength = loop.context.maximumLineLength
        self.heldReads = loop.context.heldReads
        self.sendsAtTurnEnd = loop.hasRing
        let allocator = ByteBufferAllocator()
        input = LineFramer(bytes: allocator.buffer(capacity: Self.readSize), maximumLineLength: loop.context.maximumLineLength)
        answers = AnswerQueue(ready: allocator.buffer(capacity: 4096))
    }

    var context: ConnectionContext { loop.context }
    /// What this connection watches; `nil` until its first `watch` (see `ServedConnection+Watching`).
    var watches: ConnectionWatches?

    // MARK: Events

    /// Handles what epoll reported; `turnStarted` is the loop's clock for this turn (passed in: reading it
    /// through `loop`, an unowned reference, costs a strong retain and release, about 60 instructions).
    func handle(events: UInt32, turnStarted: UInt64) {
        if events & EPOLLOUT.rawValue != 0 {
            flush()
            if isClosed { return }
        }
        if events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0, isReading {
            readAndAnswer(turnStarted: turnStarted)
        } else if isLingering {
            discardInput()
        } else if events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
            // Reported whatever the interest: the peer is gone both ways (reset), nobody reads answers.
            close()
        }
    }

    /// The client sent something at `turnStarted`: the idle sweep counts from then.
    func markActive(at turnStarted: UInt64) {
        lastActivity = turnStarted
    }

    private func readAndAnswer(turnStarted: UInt64) {
        if hasUnansweredLines {
            // Lines read earlier come first: reading more now would let a client that pipelines faster
            // than its share is answered grow `input` without bound.
            return
        }
        markActive(at: turnStarted)
        if let tls {
            readTLS(tls)
            return
        }
        guard let count = readOnce(into: &input.bytes) else { return }
        switch count {
        case 0:
            endOfInput()
        default:
            if awaitsFirstBytes, refusesTLSClient() { return }
            answerCompleteLines()
            sendAnswers()
        }
    }

    /// One `read` of at most `readSize` bytes, appended to `buffer`: how many (0 at the end of the input),
    /// or `nil` when there is nothing to read now, or the connection failed (it is then closed).
    @inline(__always)
    func readOnce(into buffer: inout ByteBuffer) -> Int? {
        // The closure must return how many bytes it wrote, never a negative number (`ByteBuffer` traps on
        // one): a failed read's errno is carried out beside it.
        var readError: Int32 = 0
        let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.readSize) { buffer in
            let count = read(descriptor, buffer.baseAddress, min(buffer.count, Self.readSize))
            if count < 0 {
                readError = errno
                return 0
            }
            return count
        }
        if readError != 0 {
            if readError != EAGAIN && readError != EWOULDBLOCK && readError != EINTR {
                close()  // reset by the peer, or worse: nobody is left to answer
            }
            return nil
        }
        return count
    }

    /// Answers the complete lines in `input`: at most `maximumRequestsPerTurn`, and no more once
    /// `timeSliceNanoseconds` have passed, so that one client that pipelines thousands of requests, or
    /// costly ones, cannot hold the loop while others wait (the rest are answered next turn, see
    /// `resume`); all of them when `everyLine` (the client has closed its side).
    func answerCompleteLines(everyLine: Bool = false) {
        var budget = everyLine ? Int.max : maximumRequestsPerTurn
        hasUnansweredLines = false
        // The clock read that ends one request's latency starts the next one's: a pipelined batch costs
        // one read a request rather than two (about 50 instructions each). The time slice is measured
        // with the same reads, so it costs one comparison a request.
        var clock: UInt64 = 0
        var sliceEnd = UInt64.max
        if !closeWhenAnswered, parked == nil { lookAheadAtPipelinedLines(upTo: min(budget, maximumRequestsPerTurn)) }
        // A parked request holds back the lines after it: they are answered once it is.
        lines: while !closeWhenAnswered, parked == nil {
            if budget == 0 || clock > sliceEnd {
                hasUnansweredLines = true
                scheduleResume()
                break
            }
            // Answers a client does not read stop its requests being answered as they are made, not only
            // between turns: else up to `maximumRequestsPerTurn` answers a turn pile up unsent (256 large
            // answers on each of many connections). The rest of its lines wait until it has read enough
            // (`flush` starts reading again below `lowWaterMark`).
            if unsentByteCount > Self.highWaterMark {
                hasUnansweredLines = true
                stopReading()
                break
            }
            let line: ByteBuffer
            switch input.nextLine() {
            case .line(let next): line = next
            case .incomplete: break lines
            case .tooLong:
                refuseLongLine()
                break lines
            }
            budget -= 1
            if clock == 0 {
                clock = monotonicNanoseconds()
                if !everyLine { sliceEnd = clock &+ Self.timeSliceNanoseconds }
            }
            clock = answer(line, startedAt: clock)
        }
        input.compact(discardAfter: Self.readSize)
    }

    /// Writes the answers of the lines just read now if none of them waits, else at the end of the turn;
    /// stops reading while too many of them wait for a client that does not read.
    func sendAnswers() {
        // With a ring the answers wait for the end of the turn, to go out with the other connections' in one
        // system call.
        if answers.hasWaiting || closeWhenAnswered || isQueuedForFlush || sendsAtTurnEnd {
            scheduleFlush()
        } else if answers.ready.readableBytes > 0 || tls?.hasOutput == true {
            flush()
        }
        if !isClosed, unsentByteCount > Self.highWaterMark { stopReading() }
    }

    /// The client sent its last byte and closed its side (or the connection broke): answer what is left,
    /// a last line without `\n` included, then close.
    func endOfInput() {
        answerCompleteLines(everyLine: true)
        if deferUntilUnparked(.endOfInput) { return }
        if !closeWhenAnswered, let last = input.unterminatedLastLine() {
            switch last {
            case .line(let line): answer(line, startedAt: monotonicNanoseconds())
            case .tooLong, .incomplete: refuseLongLine()
            }
        }
        // The last line was parked: it is answered (and the connection closed) once it may be.
        if deferUntilUnparked(.endOfInput) { return }
        input.clear()
        closeWhenAnswered = true
        stopReading()
        scheduleCommit()
        scheduleFlush()
    }

    private func refuseLongLine() {
        let limit = context.maximumLineLength
        context.logger.info(
            "closing a connection that sent a line over the limit",
            metadata: ["limit": "\(limit)"]
        )
        let tooLarge = WireError(
            .tooLarge, "the line is longer than the limit of \(limit) bytes; the connection will be closed"
        )
        statistics.recordInvalidLine(.tooLarge)
        answers.appending { ResponseEncoder.write(tooLarge, id: nil, into: &$0) }
        closeAfterAnswers()
    }

    /// A graceful stop: answers every complete line already read (a partial last line is dropped), reads
    /// nothing more, and closes once those answers are written, writes' answers after the log acknowledged them.
    func drain() {
        guard !isClosed, !closeWhenAnswered else { return }
        if parked == nil { answerCompleteLines(everyLine: true) }
        if deferUntilUnparked(.drain) { return }
        closeWhenAnswered = true
        lingersWhenAnswered = true
        stopReading()
        scheduleCommit()
        scheduleFlush()
    }

    /// Reads nothing more and closes the connection once every answer so far is written.
    func closeAfterAnswers() {
        input.clear()
        closeWhenAnswered = true
        stopReading()
        scheduleCommit()
        scheduleFlush()
    }

    /// Answers the lines a capped turn left in `input` (see `answerCompleteLines`), on the next turn.
    func resume() {
        isQueuedForResume = false
        guard !isClosed, hasUnansweredLines, isReading, parked == nil else { return }
        answerCompleteLines()
        sendAnswers()
    }

    private func scheduleResume() {
        guard !isQueuedForResume, !isClosed else { return }
        isQueuedForResume = true
        loop.needsResume(self)
    }

    /// Whether the idle timeout may close this connection: nothing in flight and no watch, whose pushes a
    /// silent client legitimately waits for.
    var isIdle: Bool {
        !answers.hasWaiting && unsentByteCount == 0 && !hasUnansweredLines && parked == nil && (watches?.count ?? 0) == 0
    }

    // MARK: Answers

    /// Answers one line read at `started` (monotonic ns); returns the clock when its answer was ready.
    @discardableResult
    func answer(_ line: ByteBuffer, startedAt started: UInt64) -> UInt64 {
        let answer: RequestProcessor.Answer
        var note = RequestProcessor.Note()
        let ownWritesPending = unansweredWrites > 0
        // Where this line's answer starts, for a read that must wait for the log after all.
        let answerStart = heldReads == nil ? 0 : answers.appendPosition
        if !answers.hasWaiting {
            // Spelled out, not through `answers.appending`: through the closure, perf showed `respond` out
            // of line (about 1% of the loop's samples at 50 connections pipelining 16 checks).
            answer = processor.respond(
                to: line, access: access, into: &answers.ready, noting: &note, ownWritesPending: ownWritesPending)
        } else {
            let processor = self.processor
            let access = self.access
            answer = answers.appending { output in
                processor.respond(to: line, access: access, into: &output, noting: &note, ownWritesPending: ownWritesPending)
            }
        }
        switch answer {
        case .written:
            if let heldReads, note.operation?.readsStore == true, let unacknowledged = heldReads.unacknowledged {
                holdAnswer(from: answerStart, of: line, until: unacknowledged, operation: note.operation!, startedAt: started)
                return monotonicNanoseconds()
            }
            return record(note, startedAt: started)
        case .write(let write, let id):
            return submit(WriteRequest(write: write, id: id), note: note, startedAt: started)
        case .afterOwnWrites:
            park(line, until: .ownWrites, startedAt: started)
        case .afterSnapshot(let id):
            let token = answers.takeToken()
            answers.wait(for: 
                WaitingAnswer(
                    token: token, answer: nil, awaitedSequence: 0, id: nil, trailing: ByteBuffer(), notice: nil, operation: .snapshot,
                    startedAt: started
                )
            )
            let loop = self.loop
            let connection = UncheckedConnection(self)
            context.processor.takeSnapshot(id: id) { answer, error in
                loop.execute { connection.value.complete(token, with: answer, error: error) }
            }
        case .watch(let request, let id):
            note.error = handle(request, id: id)
            return record(note, startedAt: started)
        case .auth(let token, let id):
            note.error = authenticate(token: token, id: id)
            return record(note, startedAt: started)
        case .stats(let id):
            let statistics = context.statistics.report(processor: context.processor)
            appendAnswer { ResponseEncoder.write(.stats(statistics), id: id, into: &$0) }
            return record(note, startedAt: started)
        case .afterSequence(let sequence, let id):
            park(line, id: id, operation: note.operation ?? .check, startedAt: started, until: sequence)
        case .afterFeedChange(let wait, let milliseconds, let id):
            park(
                line, id: id, operation: .changes, startedAt: started, until: wait.after + 1, reason: .feedChange(wait),
                waitMilliseconds: UInt64(milliseconds)
            )
        case .reload(let id):
            // Read here, on the loop: the auth file is small, the operation rare and admin-only.
            switch context.reloadAccessTokens() {
            case .success(let count):
                appendAnswer { ResponseEncoder.write(.reloaded(tokens: count), id: id, into: &$0) }
            case .failure(let error):
                note.error = error.wireError.code
                appendAnswer { ResponseEncoder.write(error.wireError, id: id, into: &$0) }
            }
            return record(note, startedAt: started)
        }
        return monotonicNanoseconds()
    }

    // MARK: Writing

    func scheduleFlush() {
        guard !isQueuedForFlush, !isClosed else { return }
        isQueuedForFlush = true
        loop.needsFlush(self)
    }

    /// Answers not yet taken by the socket: `answers.ready`, and with TLS what waits encrypted.
    var unsentByteCount: Int { answers.ready.readableBytes + (tls?.output.readableBytes ?? 0) }

    /// Writes what `answers.ready` holds (encrypted first, with TLS); what the socket does not take waits for
    /// it to be writable.
    func flush() {
        isQueuedForFlush = false
        guard !isClosed, !isLingering else { return }
        if let tls {
            do {
                try tls.encrypt(&answers.ready)
            } catch {
                close()
                return
            }
            guard sent(write(&tls.output)) else { return }
        } else {
            guard sent(write(&answers.ready)) else { return }
        }
        if wantsWritable { watchWritable(false) }
        if !isReading, !closeWhenAnswered, parked == nil, unsentByteCount < Self.lowWaterMark { startReading() }
        // `startReading` may have answered lines left by the per-turn cap, the last of them closing the
        // connection: those answers are written first (it scheduled a flush).
        if closeWhenAnswered, !answers.hasWaiting, parked == nil, unsentByteCount == 0 {
            if lingersWhenAnswered { linger() } else { close() }
        }
    }

    /// How long a lingering connection waits for its client to close.
    static let lingerMilliseconds: UInt64 = 2000

    /// Ends a drained connection without a reset. Closing a socket whose input holds unread bytes (requests
    /// a pipelining client sent after the stop began) makes the kernel send a reset, which throws away the
    /// answers still in its send buffer: the client would lose answers the server wrote. So the write side
    /// is shut instead (the client reads every answer, then the end of the stream), and whatever the client
    /// still sends is read and dropped until it closes, for at most `lingerMilliseconds`.
    private func linger() {
        guard !isLingering else { return }
        guard shutdown(descriptor, Int32(SHUT_WR)) == 0 else {
            close()
            return
        }
        isLingering = true
        isReading = false
        wantsWritable = false
        updateInterest()
        loop.noteLingering(self, until: monotonicMilliseconds() + Self.lingerMilliseconds)
    }

    /// Reads and drops what a lingering connection's client sends; closes at its end or on an error.
    private func discardInput() {
        withUnsafeTemporaryAllocation(byteCount: Self.readSize, alignment: 1) { scratch in
            for _ in 0..<4 {  // a turn's share, like a read's
                let count = read(descriptor, scratch.baseAddress, scratch.count)
                if count > 0 { continue }
                if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
                close()
                return
            }
        }
    }

    /// What `write` achieved.
    private enum WriteOutcome {
        /// Everything was sent.
        case sent
        /// The socket is full: the rest waits for it to be writable.
        case full
        /// The client is gone.
        case gone
    }

    /// Sends `buffer` until it is empty, the socket is full or the client is gone. It only sends: what
    /// follows (watching for room, closing) is `sent(_:)`'s, once `buffer` (often `answers.ready`) is no
    /// longer being modified, since closing empties the answer queue.
    @inline(__always)
    private func write(_ buffer: inout ByteBuffer) -> WriteOutcome {
        while buffer.readableBytes > 0 {
            let written = buffer.withUnsafeReadableBytes { bytes in
                send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                buffer.moveReaderIndex(forwardBy: written)
                continue
            }
            if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .full }
            if written < 0 && errno == EINTR { continue }
            return .gone
        }
        buffer.clear()
        return .sent
    }

    /// Acts on a write's outcome; true when everything was sent.
    private func sent(_ outcome: WriteOutcome) -> Bool {
        switch outcome {
        case .sent: return true
        case .full: watchWritable(true)
        case .gone: close()
        }
        return false
    }

    // MARK: Interest

    func stopReading() {
        guard isReading else { return }
        isReading = false
        updateInterest()
    }

    func startReading() {
        isReading = true
        // What the client sent while it was not read counts as activity: the idle sweep must not close it
        // before it is read.
        lastActivity = loop.turnStarted
        updateInterest()
        // Lines that arrived while reading was off may already be buffered whole: they are answered next
        // turn (`resume`), after the other connections have had theirs. Answered here, inside the turn's
        // last flushes, a client that reads its answers as fast as they are written was answered again and
        // again in one turn: a `ping` waited 450 ms (p50) behind one client pipelining pages of 1,000
        // memberships (Tools/limits/measure.py).
        hasUnansweredLines = true
        scheduleResume()
    }

    private func watchWritable(_ on: Bool) {
        guard wantsWritable != on else { return }
        wantsWritable = on
        updateInterest()
    }

    private func updateInterest() {
        var interest: Epoll.Interest = []
        if isReading || isLingering { interest.insert(.readable) }
        if wantsWritable { interest.insert(.writable) }
        if !loop.watch(self, interest) { close() }
    }

    /// Closes the socket now; answers not yet written are dropped.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        tls?.discard()
        tls = nil
        loop.forget(self)
        _ = Glibc.close(descriptor)
        // Writes this connection made whose answers were still waiting are durable once the log says so,
        // whether or not their writer is there to read the answer: watchers are still told.
        let groupCommit = loop.groupCommit
        answers.dropWaiting { groupCommit?.publishWhenCommitted($0) }
        if parked != nil {
            parked = nil
            context.processor.sequenceWaiters.cancel(self)
        }
        dropAllWatches()
        context.onClose(kind)
    }
}

/// A connection handed to another thread and back to its own loop: only ever touched on that loop.
struct UncheckedConnection: @unchecked Sendable {
    let value: ServedConnection
    init(_ value: ServedConnection) { self.value = value }
}
