import EntitledCore
import EntitledWire
import NIOCore

/// The order of a connection's answers: those ready go to `pending`; one that waits (a write for its
/// commit, a snapshot) holds in `waiting` the answers of every request read after it, until it is
/// filled in or its change is acknowledged, and then they go out in request order.
extension ServedConnection {
    /// A new token for a waiting answer.
    func takeToken() -> UInt64 {
        nextToken += 1
        return nextToken
    }

    /// Queues `answer`, which waits for the log to acknowledge change `sequence`, and asks for that.
    func appendWaiting(_ answer: WaitingAnswer, awaiting sequence: UInt64) {
        waiting.append(answer)
        newestWriteSequence = max(newestWriteSequence, sequence)
        scheduleCommit()
    }

    /// Hands a write to the server's write backend; its answer is written now, or waits in `waiting`
    /// until its change is committed. Returns the clock when it was done with.
    func submit(_ write: WriteRequest, note: RequestProcessor.Note, startedAt started: UInt64) -> UInt64 {
        let token = takeToken()
        let delivery = WriteDelivery(connection: UncheckedConnection(self), token: token)
        var answeredNow: WriteSubmission
        if waiting.isEmpty {
            answeredNow = processor.writes.submit(write, into: &pending, delivery: delivery)
        } else {
            let writes = processor.writes
            answeredNow = waiting.modify(waiting.index(before: waiting.endIndex)) { last in
                writes.submit(write, into: &last.trailing, delivery: delivery)
            }
        }
        switch answeredNow {
        case .answered(let error):
            var note = note
            note.error = error
            return record(note, startedAt: started)
        case .afterCommit(let sequence, let success, let notice):
            appendWaiting(
                WaitingAnswer(
                    token: token, answer: success, awaitedSequence: sequence, id: write.id, trailing: ByteBuffer(), notice: notice,
                    operation: note.operation ?? .grant, startedAt: started
                ),
                awaiting: sequence
            )
        case .queued:
            unansweredWrites += 1
            waiting.append(
                WaitingAnswer(
                    token: token, answer: nil, awaitedSequence: 0, id: write.id, trailing: ByteBuffer(), notice: nil,
                    operation: note.operation ?? .grant, startedAt: started
                )
            )
        }
        return monotonicNanoseconds()
    }

    /// A queued write's answer came (`WriteDelivery`): fills in its place in `waiting`, lets a read that
    /// waited for this connection's writes go, and releases what is ready.
    func writeAnswered(_ token: UInt64, answer: ByteBuffer, error: ErrorCode?) {
        guard !isClosed, let index = waiting.firstIndex(where: { $0.token == token }) else { return }
        unansweredWrites -= 1
        let (operation, startedAt) = waiting.modify(index) { element -> (Request.Operation, UInt64) in
            element.answer = answer
            return (element.operation, element.startedAt)
        }
        statistics.recordRequest(operation, nanoseconds: monotonicNanoseconds() &- startedAt, error: error)
        releaseReadyAnswers()
        if unansweredWrites == 0 { ownWritesAnswered() }
    }

    /// Counts an answered request, its latency measured from `startedAt` (monotonic ns) to now; returns now.
    @inline(__always)
    @discardableResult
    func record(_ note: RequestProcessor.Note, startedAt: UInt64) -> UInt64 {
        let now = monotonicNanoseconds()
        if let operation = note.operation {
            statistics.recordRequest(operation, nanoseconds: now &- startedAt, error: note.error)
        } else if let error = note.error {
            statistics.recordInvalidLine(error)
        }
        return now
    }

    /// Appends an answer after every answer before it: to `pending`, or behind the last waiting one.
    func appendAnswer(_ write: (inout ByteBuffer) -> Void) {
        if waiting.isEmpty {
            write(&pending)
        } else {
            waiting.modify(waiting.index(before: waiting.endIndex)) { last in write(&last.trailing) }
        }
    }

    /// The last change this connection's waiting answers need acknowledged, if any.
    var uncommittedSequence: UInt64? {
        // A connection's writes are read, and so logged, in order: the newest is the last to acknowledge.
        newestWriteSequence > acknowledgedSequence ? newestWriteSequence : nil
    }

    func scheduleCommit() {
        guard !isQueuedForCommit, uncommittedSequence != nil else { return }
        isQueuedForCommit = true
        loop.needsCommit(self)
    }

    /// The backend committed (or failed) everything through `through`: release those answers.
    func committed(through: UInt64, result: Result<Void, WriteFailure>) {
        isQueuedForCommit = false
        guard !isClosed else { return }
        // Only a success moves the mark: after a failure the store is put back to the log's last change,
        // and the changes numbered after it next are new ones that this connection must still wait for.
        if case .success = result { acknowledgedSequence = max(acknowledgedSequence, through) }
        let processor = context.processor
        // An index loop, not `for index in waiting.indices`: `CircularBuffer.indices` holds a copy of the
        // buffer, so every assignment below copied all of its storage.
        var index = waiting.startIndex
        while index != waiting.endIndex {
            let passed = waiting.modify(index) { element -> Bool in
                guard element.awaitedSequence != 0 else { return false }  // a snapshot's, or acknowledged
                guard element.awaitedSequence <= through else { return true }
                element.awaitedSequence = 0
                let latency = monotonicNanoseconds() &- element.startedAt
                switch result {
                case .success:
                    if let notice = element.notice { processor.watchHub.publish(notice) }
                    statistics.recordRequest(element.operation, nanoseconds: latency, error: nil)
                case .failure(let failure):
                    if let line = element.heldLine {
                        // A read that saw changes now undone: answered again, from what the log holds.
                        let (answer, error) = answerAgain(heldRead: line)
                        element.answer = answer
                        statistics.recordRequest(element.operation, nanoseconds: latency, error: error)
                        element.heldLine = nil
                        return false
                    }
                    var answer = ByteBuffer()
                    let error = RequestProcessor.wireError(failure)
                    ResponseEncoder.write(error, id: element.id, into: &answer)
                    element.answer = answer
                    statistics.recordRequest(element.operation, nanoseconds: latency, error: error.code)
                }
                element.notice = nil
                return false
            }
            // Writes wait in the order of their changes: the rest are all newer.
            if passed { break }
            index = waiting.index(after: index)
        }
        if case .failure = result {
            // Nothing of this connection waits for the failed changes any more: only writes still waiting
            // (numbered after `through`) keep a commit due. Rare: a scan is fine.
            newestWriteSequence = waiting.reduce(acknowledgedSequence) { max($0, $1.awaitedSequence) }
        }
        releaseReadyAnswers()
        // Writes read after the commit began wait for the next one.
        scheduleCommit()
    }

    /// Fills in a waiting answer (a snapshot's), then releases every answer that no longer waits.
    func complete(_ token: UInt64, with answer: ByteBuffer, error: ErrorCode?) {
        guard !isClosed, let index = waiting.firstIndex(where: { $0.token == token }) else { return }  // rare: copies are fine
        waiting[index].answer = answer
        statistics.recordRequest(.snapshot, nanoseconds: monotonicNanoseconds() &- waiting[index].startedAt, error: error)
        releaseReadyAnswers()
    }

    /// Moves the answers at the front of `waiting` that are ready, with what queued behind them, to
    /// `pending`, to be written at the end of the turn.
    func releaseReadyAnswers() {
        while !waiting.isEmpty, waiting.modify(waiting.startIndex, { $0.isReady }) {
            let ready = waiting.removeFirst()
            pending.writeImmutableBuffer(ready.answer!)
            if ready.trailing.readableBytes > 0 { pending.writeImmutableBuffer(ready.trailing) }
        }
        scheduleFlush()
    }
}
