import NIOCore
import Testing

@testable import EntitledServer

/// The loop's spare answer buffers: a waiting write's answer is copied out to its connection, then its
/// buffer serves a later answer, emptied, without the copied bytes changing.
@Suite struct AnswerBufferPoolTests {
    @Test func aReleasedAnswersBufferComesBackEmptyAndReusingItLeavesTheWrittenAnswerAlone() {
        var pool = AnswerBufferPool()
        var answers = AnswerQueue(ready: ByteBuffer())
        var first = pool.take()
        first.writeString("grant 1\n")
        let storage = first.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
        let token = answers.takeToken()
        answers.wait(
            for: WaitingAnswer(
                token: token, answer: first, awaitedSequence: 7, id: nil, trailing: ByteBuffer(), notice: nil, operation: .grant,
                startedAt: 0
            )
        )
        first = ByteBuffer()  // the queue holds the only reference, as a connection leaves it
        answers.committed(through: 7, succeeded: true) { _ in }
        answers.releaseReady { pool.giveBack(&$0) }
        #expect(pool.count == 1)

        var second = pool.take()
        #expect(second.readableBytes == 0 && second.capacity >= AnswerBufferPool.capacity)
        second.writeString("grant 2, longer\n")
        // The same memory, not a new allocation: emptying a buffer only the pool held kept its storage.
        #expect(second.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } == storage)
        #expect(String(buffer: answers.ready) == "grant 1\n")
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
}
