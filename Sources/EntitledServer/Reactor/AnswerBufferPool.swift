import NIOCore

/// A loop's spare buffers for the answers of writes that wait for the log: taken for each such answer
/// and given back, emptied, once it is copied out to its connection (`AnswerQueue.releaseReady`).
///
/// A bulk load keeps hundreds of grants' answers waiting per connection and turn; allocating a buffer
/// for each and freeing it a moment later took glibc's slow paths (its per-thread cache holds only seven
/// of a size), about 3% of a grant's server CPU in `perf`. Owned by one loop and used on its thread only.
/// Bounded: at most `limit` buffers of at most `largestKept` bytes are kept, about 1 MiB a loop.
struct AnswerBufferPool {
    static let limit = 1024
    /// Room for a membership answer from the start: growing an empty buffer reallocated it twice.
    static let capacity = 768
    /// A buffer grown past this (a long answer) is let go rather than kept.
    static let largestKept = 4096

    private var spares: [ByteBuffer] = []

    /// How many buffers are kept.
    var count: Int { spares.count }

    /// An empty buffer with room for an answer.
    mutating func take() -> ByteBuffer {
        spares.popLast() ?? ByteBufferAllocator().buffer(capacity: Self.capacity)
    }

    /// Keeps `buffer` for a later answer, emptied, unless the pool is full or the buffer grew large. The
    /// caller hands over its only reference: emptying a shared buffer would allocate a new one.
    mutating func giveBack(_ buffer: inout ByteBuffer) {
        guard spares.count < Self.limit, buffer.capacity >= Self.capacity, buffer.capacity <= Self.largestKept else { return }
        buffer.clear()
        spares.append(buffer)
        buffer = ByteBuffer()
    }
}
