import NIOCore
import Testing

@testable import EntitledServer

/// The loop's spare answer buffers: a run of waiting writes' answers is copied out to its connection (or
/// takes the place of its empty `ready`), then the buffer left over serves a later run, emptied, without
/// the released bytes changing.
@Suite struct AnswerBufferPoolTests {
    /// Queues `text` as a run of one write waiting for change `sequence`, in a buffer from `pool`, as
    /// `ServedConnection.submit` does; returns the address of its bytes.
    private func queueRun(_ text: String, change sequence: UInt64, from pool: inout AnswerBufferPool, into answers: inout AnswerQueue) -> UInt {
        var run = pool.take()
        run.writeString(text)
        let storage = run.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
        let write = WaitingWrite(sequence: sequence, end: run.writerIndex, id: nil, notice: nil, operation: .grant, startedAt: 0)
        answers.startRun(answers: run, token: answers.takeToken(), first: write)
        run = ByteBuffer()  // the queue holds the only reference, as a connection leaves it
        return storage
    }

    @Test func aRunCopiedBehindOtherAnswersComesBackEmptyAndReusingItLeavesTheReleasedAnswersAlone() {
        var pool = AnswerBufferPool()
        var answers = AnswerQueue(ready: ByteBuffer(string: "earlier\n"))
        let storage = queueRun("grant 1\n", change: 7, from: &pool, into: &answers)
        answers.committed(through: 7, succeeded: true, settle: { _ in })
        answers.releaseReady { pool.giveBack(&$0) }
        #expect(pool.count == 1)

        var second = pool.take()
        #expect(second.readableBytes == 0 && second.capacity >= AnswerBufferPool.capacity)
        second.writeString("grant 2, longer\n")
        // The same memory, not a new allocation: emptying a buffer only the pool held kept its storage.
        #expect(second.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } == storage)
        #expect(String(buffer: answers.ready) == "earlier\ngrant 1\n")
    }

    @Test func aRunReleasedIntoAnEmptyReadyBecomesItAndTheEmptyBufferComesBack() {
        var pool = AnswerBufferPool()
        var answers = AnswerQueue(ready: ByteBufferAllocator().buffer(capacity: AnswerBufferPool.capacity))
        let emptyReady = answers.ready.withUnsafeMutableWritableBytes { UInt(bitPattern: $0.baseAddress) }
        let storage = queueRun("grant 1\n", change: 7, from: &pool, into: &answers)
        answers.committed(through: 7, succeeded: true, settle: { _ in })
        answers.releaseReady { pool.giveBack(&$0) }
        // Not copied: `ready` is the run's own buffer now.
        #expect(answers.ready.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } == storage)
        #expect(String(buffer: answers.ready) == "grant 1\n")
        #expect(pool.count == 1)
        var next = pool.take()
        #expect(next.withUnsafeMutableWritableBytes { UInt(bitPattern: $0.baseAddress) } == emptyReady)
    }

    @Test func thePoolKeepsAtMostItsLimitAndNoBufferThatGrewLarge() {
        var pool = AnswerBufferPool()
        for index in 0..<(AnswerBufferPool.limit + 10) {
            var buffer = ByteBufferAllocator().buffer(capacity: AnswerBufferPool.capacity)
            pool.giveBack(&buffer)
            // A kept buffer is the pool's alone (the caller's reference is dropped); one beyond the limit
            // stays with the caller, who lets it go.
            #expect((buffer.capacity == 0) == (index < AnswerBufferPool.limit))
        }
        #expect(pool.count == AnswerBufferPool.limit)

        var empty = AnswerBufferPool()
        var large = ByteBufferAllocator().buffer(capacity: AnswerBufferPool.largestKept * 2)
        empty.giveBack(&large)
        var taken = ByteBuffer()  // a buffer a backend took the storage of
        empty.giveBack(&taken)
        #expect(empty.count == 0)
    }

    @Test func thePoolKeepsNoMoreBytesThanItsLimitInAll() {
        var pool = AnswerBufferPool()
        let size = AnswerBufferPool.largestKept
        let fitting = AnswerBufferPool.keptBytesLimit / size
        for index in 0..<(fitting + 3) {
            var buffer = ByteBufferAllocator().buffer(capacity: size)
            #expect(buffer.capacity == size)
            pool.giveBack(&buffer)
            #expect((buffer.capacity == 0) == (index < fitting))
        }
        #expect(pool.count == fitting)
        // A buffer taken makes room for another.
        _ = pool.take()
        var another = ByteBufferAllocator().buffer(capacity: size)
        pool.giveBack(&another)
        #expect(pool.count == fitting)
    }
}
