import CEpoll
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How a connection's answers reach its socket, and how it ends: the writes (at once, or at the end of
/// the turn through the loop), what epoll watches for it (readable while it reads, writable while answers
/// wait for room), lingering after a graceful stop, and closing.
extension ServedConnection {
    func scheduleFlush() {
        guard !isQueuedForFlush, !isClosed else { return }
        isQueuedForFlush = true
        loop.needsFlush(self)
    }

    /// Answers not yet taken by the socket: `answers.ready`, and with TLS what waits encrypted.
    var unsentByteCount: Int { answers.ready.readableBytes + (tls?.output.readableBytes ?? 0) }

    /// Writes what `answers.ready` holds (encrypted first, with TLS); what the socket does not take waits for
    /// it to be writable.
    func flush() {
        isQueuedForFlush = false
        guard phase != .closed, phase != .lingering else { return }
        if let tls {
            do {
                try tls.encrypt(&answers.ready)
            } catch {
                close()
                return
            }
            guard sent(write(&tls.output)) else { return }
        } else {
            guard sent(write(&answers.ready)) else { return }
        }
        if wantsWritable { watchWritable(false) }
        if phase == .paused, parked == nil, unsentByteCount < Self.lowWaterMark { startReading() }
        // `startReading` may have answered lines left by the per-turn cap, the last of them closing the
        // connection: those answers are written first (it scheduled a flush).
        if phase == .closingWhenAnswered || phase == .lingeringWhenAnswered, !answers.hasWaiting, parked == nil, unsentByteCount == 0 {
            if phase == .lingeringWhenAnswered { linger() } else { close() }
        }
    }

    /// How long a lingering connection waits for its client to close.
    static let lingerMilliseconds: UInt64 = 2000

    /// Ends a drained connection without a reset. Closing a socket whose input holds unread bytes (requests
    /// a pipelining client sent after the stop began) makes the kernel send a reset, which throws away the
    /// answers still in its send buffer: the client would lose answers the server wrote. So the write side
    /// is shut instead (the client reads every answer, then the end of the stream), and whatever the client
    /// still sends is read and dropped until it closes, for at most `lingerMilliseconds`.
    func linger() {
        guard phase != .lingering else { return }
        guard shutdown(descriptor, Int32(SHUT_WR)) == 0 else {
            close()
            return
        }
        phase = .lingering
        wantsWritable = false
        updateInterest()
        loop.noteLingering(self, until: monotonicMilliseconds() + Self.lingerMilliseconds)
    }

    /// Reads and drops what a lingering connection's client sends; closes at its end or on an error.
    func discardInput() {
        withUnsafeTemporaryAllocation(byteCount: Self.readSize, alignment: 1) { scratch in
            for _ in 0..<4 {  // a turn's share, like a read's
                let count = read(descriptor, scratch.baseAddress, scratch.count)
                if count > 0 { continue }
                if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
                close()
                return
            }
        }
    }

    /// What `write` achieved.
    enum WriteOutcome {
        /// Everything was sent.
        case sent
        /// The socket is full: the rest waits for it to be writable.
        case full
        /// The client is gone.
        case gone
    }

    /// Sends `buffer` until it is empty, the socket is full or the client is gone. It only sends: what
    /// follows (watching for room, closing) is `sent(_:)`'s, once `buffer` (often `answers.ready`) is no
    /// longer being modified, since closing empties the answer queue.
    @inline(__always)
    func write(_ buffer: inout ByteBuffer) -> WriteOutcome {
        while buffer.readableBytes > 0 {
            let written = buffer.withUnsafeReadableBytes { bytes in
                send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                buffer.moveReaderIndex(forwardBy: written)
                continue
            }
            if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .full }
            if written < 0 && errno == EINTR { continue }
            return .gone
        }
        buffer.clear()
        return .sent
    }

    /// Acts on a write's outcome; true when everything was sent.
    func sent(_ outcome: WriteOutcome) -> Bool {
        switch outcome {
        case .sent: return true
        case .full: watchWritable(true)
        case .gone: close()
        }
        return false
    }

    // MARK: Interest

    /// Pauses reading: too many answers wait for a client that does not read them, or a request is parked.
    func stopReading() {
        guard phase == .reading else { return }
        phase = .paused
        updateInterest()
    }

    /// Reads again a connection that was paused.
    func startReading() {
        guard phase == .paused else { return }  // closing, lingering or closed stays so
        phase = .reading
        // What the client sent while it was not read counts as activity: the idle sweep must not close it
        // before it is read.
        lastActivity = loop.turnStarted
        updateInterest()
        // Lines that arrived while reading was off may already be buffered whole: they are answered next
        // turn (`resume`), after the other connections have had theirs. Answered here, inside the turn's
        // last flushes, a client that reads its answers as fast as they are written was answered again and
        // again in one turn: a `ping` waited 450 ms (p50) behind one client pipelining pages of 1,000
        // memberships (Tools/limits/measure.py).
        hasUnansweredLines = true
        scheduleResume()
    }

    func watchWritable(_ on: Bool) {
        guard wantsWritable != on else { return }
        wantsWritable = on
        updateInterest()
    }

    func updateInterest() {
        var interest: Epoll.Interest = []
        if phase == .reading || phase == .lingering { interest.insert(.readable) }
        if wantsWritable { interest.insert(.writable) }
        if !loop.watch(self, interest) { close() }
    }

    /// Closes the socket now; answers not yet written are dropped.
    func close() {
        guard phase != .closed else { return }
        phase = .closed
        tls?.discard()
        tls = nil
        loop.forget(self)
        _ = Glibc.close(descriptor)
        // Writes this connection made whose answers were still waiting are durable once the log says so,
        // whether or not their writer is there to read the answer: watchers are still told.
        let groupCommit = loop.groupCommit
        answers.dropWaiting { groupCommit?.publishWhenCommitted($0) }
        if parked != nil {
            parked = nil
            context.processor.sequenceWaiters.cancel(self)
        }
        dropAllWatches()
        context.onClose(kind)
    }
}
