import EntitledCore
import EntitledStorage
import EntitledWire
import Logging
import NIOCore

/// Serves one connection: answers each line as it is decoded, collects the answers of one socket read in
/// one buffer and flushes them once when the read is done.
///
/// Reads happen on the connection's event loop: no thread hop between reading a check and writing its
/// answer. Flushing once per read rather than once per request is what keeps pipelined clients fast (one
/// `write` system call for a whole batch). A `BackPressureHandler` before this one stops reading from a
/// client whose responses pile up unread.
///
/// Answers leave in request order. A write's answer waits until the log acknowledges its change (the
/// loop's `LoopCommitter` commits once per loop turn), a snapshot's until it is written; answers to later
/// requests queue behind it in `waiting`.
final class RequestHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let processor: RequestProcessor
    private let logger: Logger
    /// Answers ready to be flushed. Cleared (not replaced) after each flush, so its storage is reused once
    /// the socket has taken the bytes.
    private var pending: ByteBuffer
    /// Answers still waiting (for the log or a snapshot), oldest first, each with the ready answers of
    /// the requests that came after it.
    private var waiting = CircularBuffer<WaitingAnswer>()
    private var nextToken: UInt64 = 0
    /// Set when the client closed its side or sent an over-long line: close once every answer is out.
    private var closeWhenAnswered = false
    private var context: ChannelHandlerContext?
    private var loopBoundSelf: NIOLoopBound<RequestHandler>?

    private struct WaitingAnswer {
        let token: UInt64
        var answer: ByteBuffer?
        var trailing: ByteBuffer
        /// For a write: the change the log must acknowledge, the answer then, and the id for a failure.
        var write: (sequence: UInt64, success: ByteBuffer, id: ByteBuffer?)?
    }

    /// How many response bytes may pile up during one read before they are flushed.
    static let flushThreshold = 64 * 1024

    /// Commits the log for this connection's writes, shared with the other connections of its loop.
    private let committer: LoopCommitter?

    init(processor: RequestProcessor, committer: LoopCommitter?, logger: Logger) {
        self.processor = processor
        self.committer = committer
        self.logger = logger
        self.pending = ByteBuffer()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        pending = context.channel.allocator.buffer(capacity: 4096)
        self.context = context
        loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        loopBoundSelf = nil
        waiting.removeAll()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        let answer: RequestProcessor.Answer
        if waiting.isEmpty {
            answer = processor.respond(to: line, into: &pending)
        } else {
            var last = waiting.removeLast()
            answer = processor.respond(to: line, into: &last.trailing)
            waiting.append(last)
        }
        arrange(answer, context: context)
        // One read can hold thousands of pipelined requests: hand large batches to the channel early, so
        // its writability (and with it `BackPressureHandler`) sees them before the read is done.
        if pending.readableBytes >= Self.flushThreshold {
            flush(context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        commitWrites()
        flush(context: context)
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            // The client sent its last line and closed its side: answer what is left, then close ours.
            commitWrites()
            closeWhenAnswered = true
            closeIfAnswered(context: context)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if let tooLong = error as? LineTooLongError {
            logger.info(
                "closing a connection that sent a line over the limit",
                metadata: ["remote": "\(context.remoteAddress.map { "\($0)" } ?? "?")", "limit": "\(tooLong.limit)"]
            )
            let tooLarge = WireError(
                .tooLarge,
                "the line is longer than the limit of \(tooLong.limit) bytes; the connection will be closed"
            )
            if waiting.isEmpty {
                ResponseEncoder.write(tooLarge, id: nil, into: &pending)
            } else {
                var last = waiting.removeLast()
                ResponseEncoder.write(tooLarge, id: nil, into: &last.trailing)
                waiting.append(last)
            }
            commitWrites()
            closeWhenAnswered = true
            closeIfAnswered(context: context)
            return
        }
        if case ByteToMessageDecoderError.dataReceivedInErrorState = error {
            return  // the connection is already closing after a refused line
        }
        logger.debug("closing a connection after an error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    // MARK: Answers that wait

    /// Queues an answer that is not ready yet and arranges for it to be completed on this event loop.
    private func arrange(_ answer: RequestProcessor.Answer, context: ChannelHandlerContext) {
        let token: UInt64
        switch answer {
        case .written:
            return
        case .afterLog(let sequence, let success, let id):
            // Released by `commitWrites` when this read is done.
            _ = enqueue(write: (sequence, success, id))
        case .afterSnapshot(let id):
            token = enqueue()
            guard let loopBound = loopBoundSelf else { return }
            let eventLoop = context.eventLoop
            processor.takeSnapshot(id: id) { answer in
                eventLoop.execute { loopBound.value.complete(token, with: answer) }
            }
        }
    }

    private func enqueue(write: (sequence: UInt64, success: ByteBuffer, id: ByteBuffer?)? = nil) -> UInt64 {
        nextToken += 1
        waiting.append(WaitingAnswer(token: nextToken, answer: nil, trailing: ByteBuffer(), write: write))
        return nextToken
    }

    /// The last change this connection's waiting answers need acknowledged, if any.
    var uncommittedSequence: UInt64? {
        waiting.last(where: { $0.write != nil && $0.answer == nil })?.write?.sequence
    }

    /// Asks this loop's committer to commit the writes read so far; their answers are released when it
    /// has (`committed(through:result:)`), after every connection of the loop had its turn to read.
    private func commitWrites() {
        guard uncommittedSequence != nil, let committer else { return }
        committer.enqueue(self)
    }

    /// The log acknowledged (or failed) everything through `through`: release those answers.
    func committed(through: UInt64, result: Result<Void, JournalError>) {
        guard let context else { return }
        for index in waiting.indices {
            guard waiting[index].answer == nil, let write = waiting[index].write, write.sequence <= through else {
                continue
            }
            switch result {
            case .success:
                waiting[index].answer = write.success
            case .failure(let error):
                var failure = ByteBuffer()
                RequestProcessor.writeLogFailure(error, id: write.id, into: &failure)
                waiting[index].answer = failure
            }
        }
        releaseReadyAnswers(context: context)
        flush(context: context)
        closeIfAnswered(context: context)
        // Writes read after the commit began wait for the next one.
        commitWrites()
    }

    /// Fills in a waiting answer, then releases every answer that no longer waits, in order.
    private func complete(_ token: UInt64, with answer: ByteBuffer) {
        guard let context, let index = waiting.firstIndex(where: { $0.token == token }) else { return }
        waiting[index].answer = answer
        releaseReadyAnswers(context: context)
        flush(context: context)
        closeIfAnswered(context: context)
    }

    /// Moves the answers at the front of `waiting` that are ready, with what queued behind them, to
    /// `pending`.
    private func releaseReadyAnswers(context: ChannelHandlerContext) {
        while let first = waiting.first, let ready = first.answer {
            pending.writeImmutableBuffer(ready)
            pending.writeImmutableBuffer(first.trailing)
            waiting.removeFirst()
        }
    }

    private func closeIfAnswered(context: ChannelHandlerContext) {
        guard closeWhenAnswered, waiting.isEmpty else { return }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(pending)).whenComplete { _ in channel.close(promise: nil) }
        pending.clear()
    }

    private func flush(context: ChannelHandlerContext) {
        guard pending.readableBytes > 0 else { return }
        context.writeAndFlush(wrapOutboundOut(pending), promise: nil)
        pending.clear()
    }
}
