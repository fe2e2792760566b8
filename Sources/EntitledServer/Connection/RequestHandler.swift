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
/// Answers leave in request order. A write's answer waits until the log acknowledges its change (or a
/// snapshot's until it is written); answers to later requests queue behind it in `waiting`.
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
    }

    /// How many response bytes may pile up during one read before they are flushed.
    static let flushThreshold = 64 * 1024

    init(processor: RequestProcessor, logger: Logger) {
        self.processor = processor
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
        flush(context: context)
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            // The client sent its last line and closed its side: answer what is left, then close ours.
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
            token = enqueue()
            guard let log = processor.durable?.log, let loopBound = loopBoundSelf else { return }
            let eventLoop = context.eventLoop
            log.whenAcknowledged(sequence) { result in
                eventLoop.execute {
                    switch result {
                    case .success:
                        loopBound.value.complete(token, with: success)
                    case .failure(let error):
                        var failure = ByteBuffer()
                        RequestProcessor.writeLogFailure(error, id: id, into: &failure)
                        loopBound.value.complete(token, with: failure)
                    }
                }
            }
        case .afterSnapshot(let id):
            token = enqueue()
            guard let loopBound = loopBoundSelf else { return }
            let eventLoop = context.eventLoop
            processor.takeSnapshot(id: id) { answer in
                eventLoop.execute { loopBound.value.complete(token, with: answer) }
            }
        }
    }

    private func enqueue() -> UInt64 {
        nextToken += 1
        waiting.append(WaitingAnswer(token: nextToken, answer: nil, trailing: ByteBuffer()))
        return nextToken
    }

    /// Fills in a waiting answer, then releases every answer that no longer waits, in order.
    private func complete(_ token: UInt64, with answer: ByteBuffer) {
        guard let context, let index = waiting.firstIndex(where: { $0.token == token }) else { return }
        waiting[index].answer = answer
        while let first = waiting.first, let ready = first.answer {
            pending.writeImmutableBuffer(ready)
            pending.writeImmutableBuffer(first.trailing)
            waiting.removeFirst()
        }
        flush(context: context)
        closeIfAnswered(context: context)
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
