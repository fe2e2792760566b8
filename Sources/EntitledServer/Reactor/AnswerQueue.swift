import NIOCore

/// A connection's answers in request order, with no socket: a plain value, tested on its own
/// (`AnswerQueueTests`), as `LineFramer` is for the lines coming in.
///
/// Answers that are ready go to `ready`, to be written. One that cannot go out yet (a write's until its
/// change is committed, a snapshot's until it is written) is queued in `waiting`, and the answers of
/// every request read after it queue behind it (`WaitingAnswer.trailing`) even when they are ready: once
/// it is filled in or its change acknowledged, `releaseReady` moves it and them to `ready`, in order.
struct AnswerQueue {
    /// Answers ready to write, oldest first.
    var ready: ByteBuffer
    /// Answers still waiting, oldest first, each with the ready answers of the requests that came after it.
    private(set) var waiting = CircularBuffer<WaitingAnswer>()
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
        return waiting.modify(waiting.index(before: waiting.endIndex)) { last in write(&last.trailing) }
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
    /// each waiting answer that waited for one of those changes, which no longer waits for it.
    ///
    /// Only a success moves the acknowledged mark: after a failure the store is put back to the log's last
    /// change, and the changes numbered after it next are new ones that must still be waited for.
    mutating func committed(through: UInt64, succeeded: Bool, settle: (inout WaitingAnswer) -> Void) {
        if succeeded { acknowledgedSequence = max(acknowledgedSequence, through) }
        // An index loop, not `for index in waiting.indices`: `CircularBuffer.indices` holds a copy of the
        // buffer, so every assignment below copied all of its storage.
        var index = waiting.startIndex
        while index != waiting.endIndex {
            let passed = waiting.modify(index) { element -> Bool in
                guard element.awaitedSequence != 0 else { return false }  // a snapshot's, or acknowledged
                guard element.awaitedSequence <= through else { return true }
                element.awaitedSequence = 0
                settle(&element)
                element.notice = nil
                return false
            }
            // Writes wait in the order of their changes: the rest are all newer.
            if passed { break }
            index = waiting.index(after: index)
        }
        if !succeeded {
            // Nothing waits for the failed changes any more: only writes still waiting (numbered after
            // `through`) keep a commit due. Rare: a scan is fine.
            newestWriteSequence = waiting.reduce(acknowledgedSequence) { max($0, $1.awaitedSequence) }
        }
    }

    /// Moves the answers at the front of `waiting` that are ready, with what queued behind them, to `ready`;
    /// each answer's own buffer, once copied, goes to `recycle` (its only reference).
    mutating func releaseReady(recycling recycle: (inout ByteBuffer) -> Void = { _ in }) {
        while !waiting.isEmpty, waiting.modify(waiting.startIndex, { $0.isReady }) {
            var released = waiting.removeFirst()
            var answer = released.answer.take()!
            ready.writeImmutableBuffer(answer)
            if released.trailing.readableBytes > 0 { ready.writeImmutableBuffer(released.trailing) }
            recycle(&answer)
        }
    }

    /// Drops every waiting answer (the connection closed), handing each to `dropped` first.
    mutating func dropWaiting(_ dropped: (WaitingAnswer) -> Void) {
        for answer in waiting { dropped(answer) }
        waiting.removeAll()
    }
}
