import CEpoll

#if canImport(Glibc)
import Glibc
#endif

extension ServedConnection {
    /// Queues this connection's answers as one send in `ring` (see `LoopRing.flush`), and
    /// returns `true`; `sendCompleted(_:)` then finishes what `flush()` would. Returns `false`, queueing
    /// nothing, when a plain send cannot serve it (TLS, nothing to send, closing): `flush()` does it all.
    func queueSend(in ring: SubmissionRing, tag: UInt64) -> Bool {
        guard phase != .closed, phase != .lingering, tls == nil, answers.ready.readableBytes > 0 else { return false }
        // The pointer outlives the closure: `answers.ready` is neither changed nor released until the ring has
        // completed the send, within the same `LoopRing.flush` call.
        answers.ready.withUnsafeReadableBytes { ring.queueSend(on: descriptor, $0, tag: tag) }
        return true
    }

    /// The ring sent `result` bytes of `answers.ready` (or failed with `-result`): what is left is sent, or
    /// waited for, as `flush()` does.
    func sendCompleted(_ result: Int32) {
        guard !isClosed else { return }
        if result > 0 {
            answers.ready.moveReaderIndex(forwardBy: Int(result))
        } else if result != -EAGAIN, result != -EWOULDBLOCK, result != -EINTR {
            close()  // the client is gone
            return
        }
        // Sends the rest of a partial send (or watches for room after EAGAIN), then does what follows a
        // completed write: resume reading, close a connection answered to its end.
        flush()
    }

    /// Handles what epoll reported (`events`) as `handle(events:turnStarted:)` does, except that the read,
    /// when there is one a plain receive can do, is queued in `ring` (into `slot`): then it returns `true`
    /// and `receiveCompleted` does the rest once the ring has run it. Returns `false` when it handled
    /// everything itself (TLS, reading paused, lines still unanswered, lingering, closed).
    func handleQueueingReceive(events: UInt32, in ring: SubmissionRing, into slot: UnsafeMutableRawBufferPointer, tag: UInt64, turnStarted: UInt64) -> Bool {
        var remaining = events
        if events & EPOLLOUT.rawValue != 0 {
            flush()
            if isClosed { return false }
            remaining &= ~EPOLLOUT.rawValue
        }
        // Flushing may have stopped its reading, or answered lines it had held back.
        guard tls == nil, phase == .reading, !hasUnansweredLines,
            remaining & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
        else {
            handle(events: remaining, turnStarted: turnStarted)
            return false
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
        input.bytes.writeBytes(UnsafeRawBufferPointer(rebasing: slot[..<Int(result)]))
        if awaitsFirstBytes, refusesTLSClient() { return }
        // A full slot may have left bytes in the socket: read them now, as a plain read of `readSize` would have.
        if Int(result) == slot.count, let more = readOnce(into: &input.bytes), more == 0 {
            endOfInput()
            return
        }
        answerCompleteLines()
        sendAnswers()
    }
}
