import CEpoll

#if canImport(Glibc)
import Glibc
#endif

extension ServedConnection {
    /// Queues this connection's answers as one send in `ring` (see `ServingLoop.flushThroughRing`), and
    /// returns `true`; `sendCompleted(_:)` then finishes what `flush()` would. Returns `false`, queueing
    /// nothing, when a plain send cannot serve it (TLS, nothing to send, closing): `flush()` does it all.
    func queueSend(in ring: SubmissionRing, tag: UInt64) -> Bool {
        guard !isClosed, !isLingering, tls == nil, pending.readableBytes > 0 else { return false }
        // The pointer outlives the closure: `pending` is neither changed nor released until the ring has
        // completed the send, within the same `flushThroughRing` call.
        pending.withUnsafeReadableBytes { ring.queueSend(on: descriptor, $0, tag: tag) }
        return true
    }

    /// The ring sent `result` bytes of `pending` (or failed with `-result`): what is left is sent, or
    /// waited for, as `flush()` does.
    func sendCompleted(_ result: Int32) {
        guard !isClosed else { return }
        if result > 0 {
            pending.moveReaderIndex(forwardBy: Int(result))
        } else if result != -EAGAIN, result != -EWOULDBLOCK, result != -EINTR {
            close()  // the client is gone
            return
        }
        // Sends the rest of a partial send (or watches for room after EAGAIN), then does what follows a
        // completed write: resume reading, close a connection answered to its end.
        flush()
    }

    /// Does what `handle(events:turnStarted:)` does before reading, then queues the read in `ring` (into
    /// `slot`) and returns `true`; `receiveCompleted` then does the rest. Returns `false` with nothing
    /// done when a plain read is wanted (TLS, reading paused, lines still unanswered, lingering, closed):
    /// `handle` then does it all.
    func queueReceive(events: UInt32, in ring: SubmissionRing, into slot: UnsafeMutableRawBufferPointer, tag: UInt64) -> Bool {
        guard tls == nil, isReading, !isClosed, !hasUnansweredLines,
            events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
        else { return false }
        if events & EPOLLOUT.rawValue != 0 {
            flush()
            // Flushing may close it, or stop its reading (lines it had held back were answered).
            guard !isClosed, isReading, !hasUnansweredLines else {
                if !isClosed { handle(events: events & ~EPOLLOUT.rawValue, turnStarted: loop.turnStarted) }
                return false
            }
        }
        ring.queueReceive(on: descriptor, into: slot, tag: tag)
        return true
    }

    /// The ring received `result` bytes into `slot` (0: the client closed its side; negative: `-errno`):
    /// answered as `readAndAnswer` answers what a plain read got.
    func receiveCompleted(_ result: Int32, into slot: UnsafeMutableRawBufferPointer, turnStarted: UInt64) {
        guard !isClosed else { return }
        if result < 0 {
            if result != -EAGAIN, result != -EWOULDBLOCK, result != -EINTR { close() }  // reset by the peer, or worse
            return
        }
        guard result > 0 else {
            endOfInput()
            return
        }
        markActive(at: turnStarted)
        input.writeBytes(UnsafeRawBufferPointer(rebasing: slot[..<Int(result)]))
        if awaitsFirstBytes, refusesTLSClient() { return }
        // A full slot may have left bytes in the socket: read them now, as a plain read of `readSize` would have.
        if Int(result) == slot.count, let more = readOnce(into: &input), more == 0 {
            endOfInput()
            return
        }
        answerCompleteLines()
        sendAnswers()
    }
}
