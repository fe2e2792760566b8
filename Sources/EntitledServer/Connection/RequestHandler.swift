import EntitledWire
import Logging
import NIOCore

/// Serves one connection: answers each line as it is decoded, collects the answers of one socket read in
/// one buffer and flushes them once when the read is done.
///
/// Everything happens on the connection's event loop: no thread hop between reading a check and writing
/// its answer. Flushing once per read rather than once per request is what keeps pipelined clients fast
/// (one `write` system call for a whole batch). A `BackPressureHandler` before this one stops reading from
/// a client whose responses pile up unread.
final class RequestHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let processor: RequestProcessor
    private let logger: Logger
    /// Responses not yet flushed. Cleared (not replaced) after each flush, so its storage is reused once
    /// the socket has taken the bytes.
    private var pending: ByteBuffer

    init(processor: RequestProcessor, logger: Logger) {
        self.processor = processor
        self.logger = logger
        self.pending = ByteBuffer()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        pending = context.channel.allocator.buffer(capacity: 4096)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        processor.respond(to: unwrapInboundIn(data), into: &pending)
        // One read can hold thousands of pipelined requests: hand large batches to the channel early, so
        // its writability (and with it `BackPressureHandler`) sees them before the read is done.
        if pending.readableBytes >= Self.flushThreshold {
            flush(context: context)
        }
    }

    /// How many response bytes may pile up during one read before they are flushed.
    static let flushThreshold = 64 * 1024

    func channelReadComplete(context: ChannelHandlerContext) {
        flush(context: context)
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            // The client sent its last line and closed its side: answer what is left, then close ours.
            flushAndClose(context: context)
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
            ResponseEncoder.write(tooLarge, id: nil, into: &pending)
            flushAndClose(context: context)
            return
        }
        if case ByteToMessageDecoderError.dataReceivedInErrorState = error {
            return  // the connection is already closing after a refused line
        }
        logger.debug("closing a connection after an error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    private func flush(context: ChannelHandlerContext) {
        guard pending.readableBytes > 0 else { return }
        context.writeAndFlush(wrapOutboundOut(pending), promise: nil)
        pending.clear()
    }

    /// Sends every pending response, then closes the connection.
    private func flushAndClose(context: ChannelHandlerContext) {
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(pending)).whenComplete { _ in channel.close(promise: nil) }
        pending.clear()
    }
}
