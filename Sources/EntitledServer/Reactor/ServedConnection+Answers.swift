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

    /// A queued write's answer came (`WriteDelivery`): fills in its place in `answers`, lets a read that
    /// waited for this connection's writes go, and releases what is ready.
    func writeAnswered(_ token: UInt64, answer: ByteBuffer, error: ErrorCode?) {
        guard !isClosed, let filled = answers.fill(token, with: answer) else { return }
        unansweredWrites -= 1
        statistics.recordRequest(filled.operation, nanoseconds: monotonicNanoseconds() &- filled.startedAt, error: error)
        releaseReadyAnswers()
        if unansweredWrites == 0 { ownWritesAnswered() }
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
