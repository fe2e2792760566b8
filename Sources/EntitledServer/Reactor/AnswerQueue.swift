import EntitledCore
import NIOCore

/// A connection's answers in request order, with no socket: a plain value, tested on its own
/// (`AnswerQueueTests`), as `LineFramer` is for the lines coming in.
///
/// Answers that are ready go to `ready`, to be written. One that cannot go out yet (a write's until its
/// change is committed, a snapshot's until it is written) is queued in `waiting`, and the answers of
/// every request read after it queue behind it (`WaitingAnswer.trailing`) even when they are ready: once
/// it is filled in or its change acknowledged, `releaseReady` moves it and them to `ready`, in order.
///
/// A single server's writes read one after another wait together, as one *run*: their answers written
/// one after the other into one buffer, each write's own details in `runWrites`. A pipelining client's
/// turn of 256 grants was 256 waiting answers, each in a buffer of its own copied into `ready` when
/// released (about 7% of a bulk load's CPU per grant in `perf`); it is now one, and its buffer becomes
/// `ready` when that is empty rather than being copied. A run takes writes until a commit is asked for
/// it (`closeRun`): a write read while that commit is out waits for the next, and must not hold back
/// the answers of those already in it.
struct AnswerQueue {
    /// Answers ready to write, oldest first.
    var ready: ByteBuffer
    /// Answers still waiting, oldest first, each with the ready answers of the requests that came after it.
    private(set) var waiting = CircularBuffer<WaitingAnswer>()
    /// The writes of the runs in `waiting`, in order: each run's `runLength` of them.
    private(set) var runWrites = CircularBuffer<WaitingWrite>()
    /// Whether the last waiting answer is a run that takes more writes: no commit was asked for it yet,
    /// and nothing was answered behind it. (A flag rather than a look at the last answer: reading an
    /// element of `waiting` copies it, retaining each of its buffers.)
    private var lastRunIsOpen = false
    private var lastToken: UInt64 = 0
    /// The change of the newest write queued to wait for the log, and the newest change the log acknowledged.
    private(set) var newestWriteSequence: UInt64 = 0
    private(set) var acknowledgedSequence: UInt64 = 0

    init(ready: ByteBuffer) {
        self.ready = ready
    }

    /// Whether an answer waits: every new answer then queues behind it.
    var hasWaiting: Bool { !waiting.isEmpty }

    /// A new token to find a waiting answer by when it comes.
    mutating func takeToken() -> UInt64 {
        lastToken += 1
        return lastToken
    }

    /// Runs `write` on the buffer the next answer belongs in: `ready`, or behind the last waiting answer.
    @inline(__always)
    @discardableResult
    mutating func appending<Result>(_ write: (inout ByteBuffer) -> Result) -> Result {
        if waiting.isEmpty { return write(&ready) }
        let (result, wrote) = waiting.modify(waiting.index(before: waiting.endIndex)) { last in
            let end = last.trailing.writerIndex
            return (write(&last.trailing), last.trailing.writerIndex != end)
        }
        // An answer behind the last run ends it: a later write's answer must come after this one.
        if wrote { lastRunIsOpen = false }
        return result
    }

    /// Where the next answer will start in the buffer `appending` writes to.
    var appendPosition: Int {
        waiting.isEmpty ? ready.writerIndex : waiting.last!.trailing.writerIndex
    }

    /// Takes back what was appended since `position` (`appendPosition` before it was written), as a
    /// buffer of its own: an answer that must wait after all (a held read's).
    mutating func takeAppended(since position: Int) -> ByteBuffer {
        appending { buffer in
            // Copied: a slice would share the buffer, and the next answer written there would copy it all.
            var taken = ByteBufferAllocator().buffer(capacity: buffer.writerIndex - position)
            taken.writeImmutableBuffer(buffer.getSlice(at: position, length: buffer.writerIndex - position)!)
            buffer.moveWriterIndex(to: position)
            return taken
        }
    }

    /// Queues an answer that waits: for its `awaitedSequence` to be acknowledged when it has one, else to
    /// be filled in (`fill`).
    mutating func wait(for answer: WaitingAnswer) {
        newestWriteSequence = max(newestWriteSequence, answer.awaitedSequence)
        waiting.append(answer)
        lastRunIsOpen = answer.isRun
    }

    // MARK: Runs of writes

    /// Whether the next write that waits for a commit joins the last waiting answer's run: nothing was
    /// answered after it, and no commit was asked for it yet.
    var canJoinRun: Bool { lastRunIsOpen }

    /// Runs `submit` on the buffer for answers given at once (behind the open run) and the open run's
    /// buffer, which a write that waits appends its answer to; returns its result and where the run's
    /// answers end now. Only when `canJoinRun`.
    mutating func appendingToRun<Result>(_ submit: (inout ByteBuffer, inout ByteBuffer) -> Result) -> (Result, runEnd: Int) {
        precondition(canJoinRun, "no open run to join")
        let (result, runEnd, answeredBehind) = waiting.modify(waiting.index(before: waiting.endIndex)) { last in
            let result = submit(&last.trailing, &last.answer!)
            return (result, last.answer!.writerIndex, last.trailing.readableBytes > 0)
        }
        if answeredBehind { lastRunIsOpen = false }
        return (result, runEnd)
    }

    /// Queues a new run: `answers` holds the answer of its first write, `write`.
    mutating func startRun(answers: ByteBuffer, token: UInt64, first write: WaitingWrite) {
        runWrites.append(write)
        wait(
            for: WaitingAnswer(
                token: token, answer: answers, awaitedSequence: write.sequence, id: nil, trailing: ByteBuffer(), notice: nil,
                operation: write.operation, startedAt: write.startedAt, runLength: 1
            )
        )
    }

    /// Adds `write`, whose answer `appendingToRun` appended, to the open run.
    mutating func joinRun(_ write: WaitingWrite) {
        precondition(lastRunIsOpen, "no open run to join")
        runWrites.append(write)
        newestWriteSequence = max(newestWriteSequence, write.sequence)
        waiting.modify(waiting.index(before: waiting.endIndex)) { last in
            last.runLength += 1
            last.awaitedSequence = write.sequence
        }
    }

    /// A commit is being asked for every write so far: the next one starts a run of its own.
    mutating func closeRun() {
        lastRunIsOpen = false
    }

    /// The newest change a waiting answer needs acknowledged, if any.
    var uncommittedSequence: UInt64? {
        // A connection's writes are read, and so logged, in order: the newest is the last to acknowledge.
        newestWriteSequence > acknowledgedSequence ? newestWriteSequence : nil
    }

    /// Fills in the waiting answer `token` stands for, and returns it as it is now; `nil` when none
    /// waits under that token.
    mutating func fill(_ token: UInt64, with answer: ByteBuffer) -> WaitingAnswer? {
        // Linear: only answers a backend fills in (a cluster's writes, snapshots) come here, rarely many.
        guard let index = waiting.firstIndex(where: { $0.token == token }) else { return nil }
        return waiting.modify(index) { element in
            element.answer = answer
            return element
        }
    }

    /// The log committed every change through `through` (`succeeded`), or failed to: calls `settle` on
    /// each waiting answer that waited for one of those changes, which no longer waits for it, and
    /// `settleWrite` on each such write of a run, which returns the answer that replaces the write's when
    /// it failed. A run goes once all of its writes are settled.
    ///
    /// Only a success moves the acknowledged mark: after a failure the store is put back to the log's last
    /// change, and the changes numbered after it next are new ones that must still be waited for.
    mutating func committed(
        through: UInt64, succeeded: Bool, settle: (inout WaitingAnswer) -> Void, settleWrite: (WaitingWrite) -> ByteBuffer? = { _ in nil }
    ) {
        if succeeded { acknowledgedSequence = max(acknowledgedSequence, through) }
        // Moved out while `waiting`'s elements are modified in place (both are this struct's).
        var writes = CircularBuffer<WaitingWrite>()
        swap(&writes, &runWrites)
        defer { swap(&writes, &runWrites) }
        // An index loop, not `for index in waiting.indices`: `CircularBuffer.indices` holds a copy of the
        // buffer, so every assignment below copied all of its storage.
        var index = waiting.startIndex
        var firstWrite = writes.startIndex
        while index != waiting.endIndex {
            let (passed, runLength) = waiting.modify(index) { element -> (Bool, Int) in
                if element.isRun {
                    let passed = Self.settle(run: &element, writes: &writes, from: firstWrite, through: through, settleWrite)
                    return (passed, element.runLength)
                }
                guard element.awaitedSequence != 0 else { return (false, 0) }  // a snapshot's, or acknowledged
                guard element.awaitedSequence <= through else { return (true, 0) }
                element.awaitedSequence = 0
                settle(&element)
                element.notice = nil
                return (false, 0)
            }
            // Writes wait in the order of their changes: the rest are all newer.
            if passed { break }
            firstWrite = writes.index(firstWrite, offsetBy: runLength)
            index = waiting.index(after: index)
        }
        if !succeeded {
            // Nothing waits for the failed changes any more: only writes still waiting (numbered after
            // `through`) keep a commit due. Rare: a scan is fine.
            newestWriteSequence = waiting.reduce(acknowledgedSequence) { max($0, $1.awaitedSequence) }
        }
    }

    /// Settles the writes of `run` (whose first is `writes[first]`) through `through`; returns whether
    /// some of them still wait. A failed write's answer is replaced, in place, by `settleWrite`'s.
    private static func settle(
        run: inout WaitingAnswer, writes: inout CircularBuffer<WaitingWrite>, from first: CircularBuffer<WaitingWrite>.Index,
        through: UInt64, _ settleWrite: (WaitingWrite) -> ByteBuffer?
    ) -> Bool {
        var replacements: [(offset: Int, answer: ByteBuffer)] = []
        while run.settledWrites < run.runLength {
            let write = writes[writes.index(first, offsetBy: run.settledWrites)]
            guard write.sequence <= through else { break }
            if let replacement = settleWrite(write) { replacements.append((run.settledWrites, replacement)) }
            run.settledWrites += 1
        }
        if !replacements.isEmpty { replace(replacements, in: &run, writes: &writes, from: first) }
        guard run.settledWrites == run.runLength else { return true }
        run.awaitedSequence = 0
        return false
    }

    /// Rewrites `run`'s answers with the writes at `replacements`' offsets answered anew (rare: a failed
    /// log), moving the ends of the writes after them.
    private static func replace(
        _ replacements: [(offset: Int, answer: ByteBuffer)], in run: inout WaitingAnswer, writes: inout CircularBuffer<WaitingWrite>,
        from first: CircularBuffer<WaitingWrite>.Index
    ) {
        let old = run.answer!
        var rebuilt = ByteBufferAllocator().buffer(capacity: old.readableBytes)
        var start = old.readerIndex
        var next = 0
        for offset in 0..<run.runLength {
            let index = writes.index(first, offsetBy: offset)
            let end = writes[index].end
            if next < replacements.count, replacements[next].offset == offset {
                rebuilt.writeImmutableBuffer(replacements[next].answer)
                next += 1
            } else {
                rebuilt.writeImmutableBuffer(old.getSlice(at: start, length: end - start)!)
            }
            start = end
            writes[index].end = rebuilt.writerIndex
        }
        run.answer = rebuilt
    }

    /// Moves the answers at the front of `waiting` that are ready, with what queued behind them, to `ready`;
    /// each answer's own buffer, once copied, goes to `recycle` (its only reference). An answer released
    /// while `ready` is empty becomes `ready` instead, and the empty buffer is recycled: no copy.
    mutating func releaseReady(recycling recycle: (inout ByteBuffer) -> Void = { _ in }) {
        while !waiting.isEmpty, waiting.modify(waiting.startIndex, { $0.isReady }) {
            var released = waiting.removeFirst()
            if released.isRun { runWrites.removeFirst(released.runLength) }
            var answer = released.answer.take()!
            if ready.readableBytes == 0 {
                swap(&ready, &answer)
            } else {
                ready.writeImmutableBuffer(answer)
            }
            if released.trailing.readableBytes > 0 { ready.writeImmutableBuffer(released.trailing) }
            recycle(&answer)
        }
        if waiting.isEmpty { lastRunIsOpen = false }
    }

    /// Drops every waiting answer (the connection closed), handing the notice of each write not yet
    /// settled to `dropped`: the write is durable once the log says so, whoever reads its answer.
    mutating func dropWaiting(_ dropped: (AccessNotice) -> Void) {
        var firstWrite = runWrites.startIndex
        for answer in waiting {
            if answer.isRun {
                for offset in answer.settledWrites..<answer.runLength {
                    if let notice = runWrites[runWrites.index(firstWrite, offsetBy: offset)].notice { dropped(notice) }
                }
                firstWrite = runWrites.index(firstWrite, offsetBy: answer.runLength)
            } else if let notice = answer.notice {
                dropped(notice)
            }
        }
        waiting.removeAll()
        runWrites.removeAll()
        lastRunIsOpen = false
    }
}
