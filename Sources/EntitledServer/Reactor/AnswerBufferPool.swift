import NIOCore

/// A loop's spare buffers for the answers of writes that wait for the log: taken for each run of them
/// (`AnswerQueue.startRun`) and given back, emptied, once the run is released to its connection (the run's
/// own buffer, or the empty `ready` it took the place of).
///
/// A bulk load keeps hundreds of grants' answers waiting per connection and turn; allocating a buffer
/// for each and freeing it a moment later took glibc's slow paths (its per-thread cache holds only seven
/// of a size), about 3% of a grant's server CPU in `perf`. A run of a pipelining client's turn grows to
/// a few hundred KiB, so buffers that large are kept too, and grown ones are not grown again next turn.
/// Owned by one loop and used on its thread only. Bounded: at most `limit` buffers of at most
/// `largestKept` bytes each and `keptBytesLimit` in all.
struct AnswerBufferPool {
    static let limit = 1024
    /// Room for a membership answer from the start: growing an empty buffer reallocated it twice.
    static let capacity = 768
    /// A buffer grown past this is let go rather than kept.
    static let largestKept = 1 << 20
    /// The most bytes of buffers kept at once.
    static let keptBytesLimit = 8 << 20

    private var spares: [ByteBuffer] = []
    private var keptBytes = 0

    /// How many buffers are kept.
    var count: Int { spares.count }

    /// An empty buffer with room for an answer.
    mutating func take() -> ByteBuffer {
        guard let spare = spares.popLast() else { return ByteBufferAllocator().buffer(capacity: Self.capacity) }
        keptBytes -= spare.capacity
        return spare
    }

    /// Keeps `buffer` for a later answer, emptied, unless the pool is full or the buffer grew too large.
    /// The caller hands over its only reference: emptying a shared buffer would allocate a new one.
    mutating func giveBack(_ buffer: inout ByteBuffer) {
        let size = buffer.capacity
        guard spares.count < Self.limit, size >= Self.capacity, size <= Self.largestKept, keptBytes + size <= Self.keptBytesLimit else {
            return
        }
        buffer.clear()
        spares.append(buffer)
        keptBytes += size
        buffer = ByteBuffer()
    }
}
