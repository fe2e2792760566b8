import NIOCore
import NIOEmbedded
import NIOSSL

/// One connection's TLS: NIOSSL's server handler, fed the bytes read from the socket and asked for the
/// bytes to write to it.
///
/// The connection is served by a hand-written epoll loop (see `ServingLoop`), not a SwiftNIO channel, so
/// the handler runs in an `EmbeddedChannel` of its own, driven by the connection on its loop's thread
/// (where the channel is created, as `EmbeddedEventLoop` requires). TLS costs only TLS connections: plain
/// ones never touch this.
final class TLSSession {
    private let channel: EmbeddedChannel
    /// Encrypted bytes waiting for the socket: handshake records and encrypted answers.
    var output: ByteBuffer
    /// Where the connection reads encrypted bytes before they are decrypted into its input.
    var scratch: ByteBuffer

    init(context: NIOSSLContext) throws {
        let inputClosed = InputClosedObserver()
        channel = EmbeddedChannel(handlers: [NIOSSLServerHandler(context: context), inputClosed])
        self.inputClosed = inputClosed
        // A client's close_notify ends its input, not the connection: its last requests are still
        // answered, as a half-closed plain TCP connection's are.
        channel.allowRemoteHalfClosure = true
        // Active, so the handler expects a handshake; the address is never used.
        // Embedded futures complete at once; no wait needed (and `wait()` is not for event loops).
        channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1), promise: nil)
        let allocator = ByteBufferAllocator()
        output = allocator.buffer(capacity: 4096)
        scratch = allocator.buffer(capacity: ServedConnection.readSize)
    }

    private let inputClosed: InputClosedObserver

    var hasOutput: Bool { output.readableBytes > 0 }

    /// Whether the client has ended its input with a close_notify.
    var isInputClosed: Bool { inputClosed.seen }

    /// Decrypts what `scratch` holds (emptying it) into `plaintext`, queueing in `output` what the
    /// handshake must send. Throws when the peer does not speak TLS or the handshake fails.
    func decrypt(into plaintext: inout ByteBuffer) throws {
        let ciphertext = scratch
        scratch.clear()
        try channel.writeInbound(ciphertext)
        while var decrypted = try channel.readInbound(as: ByteBuffer.self) {
            plaintext.writeBuffer(&decrypted)
        }
        try drainOutbound()
    }

    /// Encrypts `plaintext` (emptying it) into `output`.
    func encrypt(_ plaintext: inout ByteBuffer) throws {
        guard plaintext.readableBytes > 0 else { return }
        // NIOSSL drops writes on a closed session without an error: fail instead, so the connection closes
        // rather than lose answers silently.
        guard channel.isActive else { throw ChannelError.ioOnClosedChannel }
        let chunk = plaintext
        plaintext.clear()
        channel.write(chunk, promise: nil)
        channel.flush()
        try channel.throwIfErrorCaught()
        try drainOutbound()
    }

    private func drainOutbound() throws {
        while var encrypted = try channel.readOutbound(as: ByteBuffer.self) {
            output.writeBuffer(&encrypted)
        }
    }

    /// Ends the session: the socket is closing anyway. NIOSSL would wait for the peer's close_notify up
    /// to its shutdown timeout, a timer on the embedded loop; running the loop's clock past it completes
    /// the close at once rather than wait for a peer that is gone (`finish()` would block on it).
    func discard() {
        channel.close(promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(3600))
    }
}

/// Notes the `inputClosed` event NIOSSL sends after a close_notify, for `TLSSession.isInputClosed`.
private final class InputClosedObserver: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    private(set) var seen = false

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event { seen = true }
        context.fireUserInboundEventTriggered(event)
    }
}
