import EntitledCore
import EntitledWire
import NIOCore

/// A request a connection cannot answer yet: a read whose `minSeq` the store has not reached, or, on a
/// node of a cluster, a read after this connection's writes that are not yet committed. The lines after
/// it are not run until it is answered, so that answers stay in order and a later read sees the writes
/// before it.
struct ParkedRequest {
    enum Reason {
        /// Until the store has applied this change, or `--min-seq-wait` has passed.
        case sequence(UInt64)
        /// A read of the change feed with `wait`: until the store has applied a change it shows, or the
        /// read's `wait` has passed (then its page is empty).
        case feedChange(FeedWait)
        /// Until every write this connection submitted before it is answered (`unansweredWrites`).
        case ownWrites
    }

    var reason: Reason
    /// The request's line, answered again once it may be.
    let line: ByteBuffer
    let id: ByteBuffer?
    let operation: Request.Operation
    /// When its line was read (monotonic ns), for the latency statistics.
    let startedAt: UInt64
    /// `ServedConnection.parkings` when it was parked.
    let number: UInt64
}

/// What ended a connection's input while a request was parked.
enum DeferredEnd {
    /// The client closed its side (`endOfInput`).
    case endOfInput
    /// A graceful stop began (`drain`).
    case drain
}

extension ServedConnection {
    /// Holds the read `line` until the store has applied change `sequence`, at most `--min-seq-wait` (or,
    /// for a read of the change feed, its `wait`).
    func park(
        _ line: ByteBuffer, id: ByteBuffer?, operation: Request.Operation, startedAt: UInt64, until sequence: UInt64,
        reason: ParkedRequest.Reason? = nil, waitMilliseconds: UInt64? = nil
    ) {
        parkings += 1
        parked = ParkedRequest(
            reason: reason ?? .sequence(sequence), line: line, id: id, operation: operation, startedAt: startedAt, number: parkings
        )
        // Nothing more is read meanwhile: the lines after it wait, and a client cannot pile up more.
        stopReading()
        let processor = context.processor
        processor.sequenceWaiters.wait(self, for: sequence)
        loop.noteParked(self, number: parkings, until: monotonicMilliseconds() + (waitMilliseconds ?? context.minimumSequenceWaitMilliseconds))
        // A change applied between the store's look and the registration woke nobody: look again.
        if processor.store.sequence >= sequence {
            processor.sequenceWaiters.cancel(self)
            loop.execute { [self] in sequenceReached() }
        }
    }

    /// Holds the read `line` until every write this connection submitted before it is answered: it is
    /// then answered again, and sees them. No deadline: each of those writes is answered within the write
    /// timeout.
    func park(_ line: ByteBuffer, until reason: ParkedRequest.Reason, startedAt: UInt64) {
        parkings += 1
        parked = ParkedRequest(reason: reason, line: line, id: nil, operation: .check, startedAt: startedAt, number: parkings)
        stopReading()
    }

    /// Called (on this loop) once none of this connection's writes waits for its answer any more.
    func ownWritesAnswered() {
        guard !isClosed, let parked, case .ownWrites = parked.reason else { return }
        answerAgain(parked)
    }

    /// Called (on this loop) once the store has applied the change a parked read waits for.
    func sequenceReached() {
        guard !isClosed, let parked else { return }
        switch parked.reason {
        case .sequence: answerAgain(parked)
        case .feedChange(let wait): feedChanged(parked, wait)
        case .ownWrites: return
        }
    }

    /// Called by the loop once parking `number` has waited `--min-seq-wait`: answers it from the store if
    /// the change arrived meanwhile, else `stale`.
    func sequenceWaitExpired(number: UInt64) {
        guard !isClosed, let parked, parked.number == number else { return }
        if case .feedChange(let wait) = parked.reason {
            feedWaitExpired(parked, wait)
            return
        }
        guard case .sequence(let wanted) = parked.reason else { return }
        let processor = context.processor
        processor.sequenceWaiters.cancel(self)
        let applied = processor.store.sequence
        guard applied < wanted else {
            answerAgain(parked)
            return
        }
        self.parked = nil
        let waited = (monotonicNanoseconds() &- parked.startedAt) / 1_000_000
        let error = WireError(
            .stale,
            "this node has applied changes up to \(applied), not yet change \(wanted) asked for with \(parked.operation == .changes ? "afterSeq" : "minSeq"); waited \(waited) ms (--min-seq-wait \(context.minimumSequenceWaitMilliseconds) ms): retry, or ask another node"
        )
        appendAnswer { ResponseEncoder.write(error, id: parked.id, into: &$0) }
        var note = RequestProcessor.Note()
        note.operation = parked.operation
        note.error = .stale
        record(note, startedAt: parked.startedAt)
        continueAfterPark()
    }

    /// The store applied a change after the one a waiting read of the feed looked at last: answers the
    /// read, unless it asked about a subject that none of the new changes concerns; then it waits on, for
    /// the time it has left.
    private func feedChanged(_ parked: ParkedRequest, _ wait: FeedWait) {
        guard let subject = wait.subject else { return answerAgain(parked) }
        let store = context.processor.store
        let page: FeedPage
        do throws(StoreError) {
            page = try store.changes(after: wait.lookedAt, limit: wait.limit, subject: subject)
        } catch {
            return answerAgain(parked)  // answered with the error
        }
        guard page.items.isEmpty, page.next > wait.lookedAt else { return answerAgain(parked) }
        var waiting = parked
        var looked = wait
        looked.lookedAt = page.next
        waiting.reason = .feedChange(looked)
        self.parked = waiting
        context.processor.sequenceWaiters.wait(self, for: page.next + 1)
        // A change applied between the look and the registration woke nobody: look again.
        if store.sequence > page.next {
            context.processor.sequenceWaiters.cancel(self)
            loop.execute { [self] in sequenceReached() }
        }
    }

    /// A read of the change feed waited its `wait`: answers its page, of what is durable now (empty,
    /// unless a change it shows came as the time ran out).
    private func feedWaitExpired(_ parked: ParkedRequest, _ wait: FeedWait) {
        let processor = context.processor
        processor.sequenceWaiters.cancel(self)
        self.parked = nil
        var note = RequestProcessor.Note()
        note.operation = .changes
        let answer: Result<Response, WireError>
        do throws(StoreError) {
            // Only what is durable: this answer is not held for the log, as other reads may be.
            answer = .success(
                .changes(try processor.store.changes(after: wait.after, limit: wait.limit, newest: processor.durableSequence, subject: wait.subject))
            )
        } catch {
            answer = .failure(RequestProcessor.wireError(error))
        }
        appendAnswer { output in
            switch answer {
            case .success(let response): ResponseEncoder.write(response, id: parked.id, into: &output)
            case .failure(let error): ResponseEncoder.write(error, id: parked.id, into: &output)
            }
        }
        if case .failure(let error) = answer { note.error = error.code }
        record(note, startedAt: parked.startedAt)
        continueAfterPark()
    }

    /// Whether a request is parked: then what ended the input (`end`) is done once it is answered.
    func deferUntilUnparked(_ end: DeferredEnd) -> Bool {
        guard let parked else { return false }
        if deferredEnd == nil { deferredEnd = end }
        stopReading()
        // A read of the feed may wait 30 s for nothing: a client that is gone, or a server that stops,
        // gets its page now (empty, unless a change came) rather than holding the connection that long.
        if case .feedChange(let wait) = parked.reason { feedWaitExpired(parked, wait) }
        return true
    }

    /// Runs a parked read's line again: the store has its change now (or it parks again).
    private func answerAgain(_ parked: ParkedRequest) {
        self.parked = nil
        answer(parked.line, startedAt: parked.startedAt)
        continueAfterPark()
    }

    /// After a parked request was answered: answers the lines held behind it, finishes an input that ended
    /// meanwhile, and reads again.
    private func continueAfterPark() {
        guard parked == nil else {
            // Parked again at once (the line was a read whose `minSeq` the store has not reached).
            sendAnswers()
            return
        }
        if let end = deferredEnd {
            deferredEnd = nil
            switch end {
            case .endOfInput: endOfInput()
            case .drain: drain()
            }
            return
        }
        answerCompleteLines()
        if parked == nil, phase == .paused, unsentByteCount < Self.lowWaterMark { startReading() }
        sendAnswers()
    }
}
