import EntitledCore
import EntitledWire
import NIOCore

/// What ties a connection's `AnswerQueue` to its socket, its loop and the write backend: writes handed
/// to the backend, commits asked for and reported, answers filled in, and the statistics of each.
extension ServedConnection {
    /// Queues `answer`, which waits for the log to acknowledge its change, and asks for that.
    func appendWaiting(_ answer: WaitingAnswer) {
        answers.wait(for: answer)
        scheduleCommit()
    }

    /// Hands a write to the server's write backend; its answer is written now, or waits in `answers`
    /// until its change is committed, in the open run of writes when there is one (`AnswerQueue`).
    /// Returns the clock when it was done with.
    func submit(_ write: WriteRequest, note: RequestProcessor.Note, startedAt started: UInt64) -> UInt64 {
        let token = answers.takeToken()
        let delivery = WriteDelivery(connection: UncheckedConnection(self), token: token)
        let writes = processor.writes
        let joinsRun = answers.canJoinRun
        var runBuffer = ByteBuffer()
        let submission: WriteSubmission
        let runEnd: Int
        if joinsRun {
            (submission, runEnd) = answers.appendingToRun { output, run in
                writes.submit(write, into: &output, pending: &run, delivery: delivery)
            }
        } else {
            runBuffer = loop.answerBuffers.take()
            submission = answers.appending { output in
                writes.submit(write, into: &output, pending: &runBuffer, delivery: delivery)
            }
            runEnd = runBuffer.writerIndex
        }
        switch submission {
        case .answered(let error):
            if !joinsRun { loop.answerBuffers.giveBack(&runBuffer) }
            var note = note
            note.error = error
            return record(note, startedAt: started)
        case .afterCommit(let sequence, let notice):
            let waiting = WaitingWrite(
                sequence: sequence, end: runEnd, id: write.id, notice: notice, operation: note.operation ?? .grant, startedAt: started)
            if joinsRun {
                answers.joinRun(waiting)
            } else {
                answers.startRun(answers: runBuffer, token: token, first: waiting)
            }
            scheduleCommit()
        case .queued:
            if !joinsRun { loop.answerBuffers.giveBack(&runBuffer) }
            unansweredWrites += 1
            answers.wait(
                for: WaitingAnswer(
                    token: token, answer: nil, awaitedSequence: 0, id: write.id, trailing: ByteBuffer(), notice: nil,
                    operation: note.operation ?? .grant, startedAt: started
                )
            )
        }
        return monotonicNanoseconds()
    }

    /// A queued write's answer came (`WriteDelivery`): fills in its place in `answers`, lets a read that
    /// waited for this connection's writes go, and releases what is ready.
    func writeAnswered(_ token: UInt64, answer: ByteBuffer, error: ErrorCode?) {
        guard !isClosed, let filled = answers.fill(token, with: answer) else { return }
        unansweredWrites -= 1
        statistics.recordRequest(filled.operation, nanoseconds: monotonicNanoseconds() &- filled.startedAt, error: error)
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

    /// Appends an answer after every answer before it.
    func appendAnswer(_ write: (inout ByteBuffer) -> Void) {
        answers.appending(write)
    }

    func scheduleCommit() {
        guard !isQueuedForCommit, answers.uncommittedSequence != nil else { return }
        isQueuedForCommit = true
        loop.needsCommit(self)
    }

    /// The backend committed (or failed) everything through `through`: release those answers.
    func committed(through: UInt64, result: Result<Void, WriteFailure>) {
        isQueuedForCommit = false
        guard !isClosed else { return }
        switch result {
        case .success:
            settle(through: through, failure: nil)
        case .failure(let failure):
            // The log kept the changes through `madeThrough` before it failed (the group's first writes,
            // synced by its writer thread on its own): those were made, and their writers are told so;
            // only the writes after them failed.
            if let made = failure.madeThrough, made > 0 { settle(through: min(made, through), failure: nil) }
            settle(through: through, failure: failure)
        }
        releaseReadyAnswers()
        // Writes read after the commit began wait for the next one.
        scheduleCommit()
    }

    /// Settles the answers waiting for changes through `through`: made, or refused with `failure`.
    private func settle(through: UInt64, failure: WriteFailure?) {
        let processor = context.processor
        let now = monotonicNanoseconds()
        /// Publishes or refuses one write, counts it, and returns the answer that replaces its own when
        /// the commit failed.
        func settle(operation: Request.Operation, startedAt: UInt64, notice: AccessNotice?, id: ByteBuffer?) -> ByteBuffer? {
            guard let failure else {
                if let notice { processor.watchHub.publish(notice) }
                statistics.recordRequest(operation, nanoseconds: now &- startedAt, error: nil)
                return nil
            }
            var answer = ByteBuffer()
            let error = RequestProcessor.wireError(failure)
            ResponseEncoder.write(error, id: id, into: &answer)
            statistics.recordRequest(operation, nanoseconds: now &- startedAt, error: error.code)
            return answer
        }
        answers.committed(
            through: through, succeeded: failure == nil,
            settle: { element in
                if failure != nil, let line = element.heldLine {
                    // A read that saw changes now undone: answered again, from what the log holds.
                    let (answer, error) = answerAgain(heldRead: line)
                    element.answer = answer
                    statistics.recordRequest(element.operation, nanoseconds: now &- element.startedAt, error: error)
                    element.heldLine = nil
                    return
                }
                if let replacement = settle(operation: element.operation, startedAt: element.startedAt, notice: element.notice, id: element.id) {
                    element.answer = replacement
                }
            },
            settleWrite: { write in
                settle(operation: write.operation, startedAt: write.startedAt, notice: write.notice, id: write.id)
            }
        )
    }

    /// Fills in a waiting answer (a snapshot's), then releases every answer that no longer waits.
    func complete(_ token: UInt64, with answer: ByteBuffer, error: ErrorCode?) {
        guard !isClosed, let filled = answers.fill(token, with: answer) else { return }
        statistics.recordRequest(.snapshot, nanoseconds: monotonicNanoseconds() &- filled.startedAt, error: error)
        releaseReadyAnswers()
    }

    /// Moves the answers at the front of the queue that are ready, with what queued behind them, to be
    /// written at the end of the turn.
    func releaseReadyAnswers() {
        let loop = self.loop
        answers.releaseReady { loop.answerBuffers.giveBack(&$0) }
        scheduleFlush()
    }
}
