import EntitledCore
import EntitledWire
import NIOCore

/// Reads that wait for the log (`--unsynced-reads hold`): a read answered while the log had changes it
/// had not acknowledged may have seen them, and a crash before their sync would lose them. Its answer
/// then waits, like a write's, until the log acknowledges every change recorded when it was read; if
/// the log fails instead, those changes are undone and the read is answered again from what is left.
extension ServedConnection {
    /// Moves the answer just written (from `start`, an `answers.appendPosition`) into an answer of its
    /// own that waits for change `sequence`.
    func holdAnswer(from start: Int, of line: ByteBuffer, until sequence: UInt64, operation: Request.Operation, startedAt: UInt64) {
        let held = answers.takeAppended(since: start)
        var ownLine = ByteBufferAllocator().buffer(capacity: line.readableBytes)
        ownLine.writeImmutableBuffer(line)
        appendWaiting(
            WaitingAnswer(
                token: answers.takeToken(), answer: held, awaitedSequence: sequence, id: nil, trailing: ByteBuffer(), notice: nil,
                operation: operation, startedAt: startedAt, heldLine: ownLine
            )
        )
    }

    /// The answer to a held read whose changes the log failed to keep, from the store as it is now (put
    /// back to what the log holds), with its error code.
    func answerAgain(heldRead line: ByteBuffer) -> (ByteBuffer, ErrorCode?) {
        var answer = ByteBuffer()
        var note = RequestProcessor.Note()
        if case .written = processor.respond(to: line, access: access, into: &answer, noting: &note) {
            return (answer, note.error)
        }
        // Not a plain read after all (a read that waits for a change): refused rather than guessed.
        answer.clear()
        let error = WireError(.unavailable, "the changes this read saw could not be made durable and were undone; retry it")
        ResponseEncoder.write(error, id: nil, into: &answer)
        return (answer, error.code)
    }
}

extension Request.Operation {
    /// Whether the answer is read from the store's memberships or catalog (and so may reflect a change).
    var readsStore: Bool {
        switch self {
        case .check, .memberships, .customer, .catalog, .history: true
        default: false
        }
    }
}
