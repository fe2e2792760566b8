import EntitledCore
import EntitledWire
import NIOCore

/// An answer that cannot go out yet (a write's until its change is committed, a snapshot's until it is
/// written, a held read's until the log acknowledges what it saw), with the ready answers of the
/// requests read after it.
///
/// Flat fields rather than an optional tuple, and touched in place (`CircularBuffer.modify`): a copy
/// out of the buffer retains every `ByteBuffer` in it, and the optional tuple was copied through the
/// runtime's generic value witnesses (callgrind: about 6,000 of a durable grant's 29,000 instructions).
struct WaitingAnswer {
    let token: UInt64
    /// The answer: a single server's write's from the start, a cluster's write's or a snapshot's once
    /// it comes.
    var answer: ByteBuffer?
    /// For a single server's write, until the log commits it: the change the log must commit. 0 otherwise.
    var awaitedSequence: UInt64
    /// For a write: its id, for the answer that reports a failed log.
    var id: ByteBuffer?
    /// The answers to requests read after this one, sent right after it.
    var trailing: ByteBuffer
    /// What watchers are told once the write is durable.
    var notice: AccessNotice?
    /// The request's operation and when its line was read (monotonic ns), for the latency statistics.
    let operation: Request.Operation
    let startedAt: UInt64
    /// For a read held until the log acknowledges the changes it may have seen (`+HeldReads`): its
    /// line, answered again if those changes fail and are undone.
    var heldLine: ByteBuffer? = nil
    /// For a run of a single server's writes (`AnswerQueue.startRun`): how many writes' answers `answer`
    /// holds, one after the other, and how many of them the log has settled (committed or failed). 0 for
    /// any other answer.
    var runLength = 0
    var settledWrites = 0

    var isReady: Bool { awaitedSequence == 0 && answer != nil }
    var isRun: Bool { runLength > 0 }
}

/// One write of a run: what its answer needs once the log has settled its change.
struct WaitingWrite {
    /// The change the log must commit.
    let sequence: UInt64
    /// Where its answer ends in its run's buffer (a writer index).
    var end: Int
    /// Its id, for the answer that reports a failed log.
    let id: ByteBuffer?
    /// What watchers are told once the write is durable.
    let notice: AccessNotice?
    /// For the latency statistics.
    let operation: Request.Operation
    let startedAt: UInt64
}
