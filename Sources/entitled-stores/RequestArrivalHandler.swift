import NIOCore

/// First in a connection's pipeline, ahead of the HTTP decoder: tells the `RequestDeadlineHandler` that bytes
/// came, so that a request's time starts at its first byte. A header trickled a byte at a time is no HTTP part
/// until it is whole, so the deadline handler, which reads parts, could not see it begin.
final class RequestArrivalHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Bytes came (sent ahead of them, so the deadline handler sees it before any part they decode to).
    struct BytesArrived {}

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireUserInboundEventTriggered(BytesArrived())
        context.fireChannelRead(data)
    }
}

@available(*, unavailable)
extension RequestArrivalHandler: Sendable {}
