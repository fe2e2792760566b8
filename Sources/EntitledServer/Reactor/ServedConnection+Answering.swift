import EntitledCore
import EntitledWire
import NIOCore

/// How a connection answers the lines it read, one at a time and in order: `RequestProcessor.respond`
/// decodes a line and answers what the store alone can (into the answer queue, with no I/O), and says
/// what is left for the connection (`RequestProcessor.Answer`); `answer(_:startedAt:)` here does that
/// part (a write submitted to the write backend, a read parked until it may be answered, a watch, an
/// auth, a snapshot, stats) and counts the request. What then waits for a commit or a snapshot is
/// `+Answers`; what is sent when is `+Sending`.
extension ServedConnection {
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
        if phase.takesRequests, parked == nil { lookAheadAtPipelinedLines(upTo: min(budget, maximumRequestsPerTurn)) }
        // A parked request holds back the lines after it: they are answered once it is.
        lines: while phase.takesRequests, parked == nil {
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
}
