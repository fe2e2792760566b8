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
    var isQueuedForFlush = false
    var isQueuedForCommit = false
    var isQueuedForResume = false
    /// Complete lines wait in `input` because the last turn answered `maximumRequestsPerTurn` of them:
    /// they are answered next turn, before anything more is read.
    var hasUnansweredLines = false
    /// When the client last sent something (the loop's coarse clock, milliseconds), for the idle timeout.
    var lastActivity: UInt64
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
    /// Where the connection is between accept and close: reading, paused, closing once answered,
    /// lingering, closed.
    var phase = ConnectionPhase.reading
    /// Whether epoll reports the socket writable: the socket was full, the rest of the answers wait.
    var wantsWritable = false
    /// Whether the connection is closed: nothing it does reaches the socket any more.
    var isClosed: Bool { phase == .closed }

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
        if events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0, phase == .reading {
            readAndAnswer(turnStarted: turnStarted)
        } else if phase == .lingering {
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

    /// Writes the answers of the lines just read now if none of them waits, else at the end of the turn;
    /// stops reading while too many of them wait for a client that does not read.
    func sendAnswers() {
        // With a ring the answers wait for the end of the turn, to go out with the other connections' in one
        // system call.
        if answers.hasWaiting || !phase.takesRequests || isQueuedForFlush || sendsAtTurnEnd {
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
        if phase.takesRequests, let last = input.unterminatedLastLine() {
            switch last {
            case .line(let line): answer(line, startedAt: monotonicNanoseconds())
            case .tooLong, .incomplete: refuseLongLine()
            }
        }
        // The last line was parked: it is answered (and the connection closed) once it may be.
        if deferUntilUnparked(.endOfInput) { return }
        input.clear()
        closeWhenAnswered(lingering: false)
    }

    func refuseLongLine() {
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
        guard phase.takesRequests else { return }
        if parked == nil { answerCompleteLines(everyLine: true) }
        if deferUntilUnparked(.drain) { return }
        closeWhenAnswered(lingering: true)
    }

    /// Reads nothing more and closes the connection once every answer so far is written.
    func closeAfterAnswers() {
        input.clear()
        closeWhenAnswered(lingering: false)
    }

    /// Reads nothing more, and closes once every answer so far is written (lingering first for a
    /// graceful stop). A connection already closing keeps lingering if it was to; one lingering or closed
    /// stays so.
    private func closeWhenAnswered(lingering: Bool) {
        let next: ConnectionPhase = lingering ? .lingeringWhenAnswered : .closingWhenAnswered
        switch phase {
        case .reading:
            phase = next
            updateInterest()
        case .paused, .closingWhenAnswered:
            phase = next
        case .lingeringWhenAnswered:
            break  // lingering wins
        case .lingering, .closed:
            return
        }
        scheduleCommit()
        scheduleFlush()
    }

    /// Answers the lines a capped turn left in `input` (see `answerCompleteLines`), on the next turn.
    func resume() {
        isQueuedForResume = false
        guard hasUnansweredLines, phase == .reading, parked == nil else { return }
        answerCompleteLines()
        sendAnswers()
    }

    func scheduleResume() {
        guard !isQueuedForResume, !isClosed else { return }
        isQueuedForResume = true
        loop.needsResume(self)
    }

    /// Whether the idle timeout may close this connection: nothing in flight and no watch, whose pushes a
    /// silent client legitimately waits for.
    var isIdle: Bool {
        !answers.hasWaiting && unsentByteCount == 0 && !hasUnansweredLines && parked == nil && (watches?.count ?? 0) == 0
    }
}

/// A connection handed to another thread and back to its own loop: only ever touched on that loop.
struct UncheckedConnection: @unchecked Sendable {
    let value: ServedConnection
    init(_ value: ServedConnection) { self.value = value }
}
