#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers
import NIOCore

/// Writes requests and matches each answer to the oldest request waiting, on the channel's event loop
/// only (all its state is confined there). Pushed lines go to the connection's `pushes`.
final class ResponseMatcher: ChannelDuplexHandler {
    typealias InboundIn = String
    typealias OutboundIn = PipelinedRequest
    typealias OutboundOut = ByteBuffer

    private struct Waiting {
        let serial: UInt64
        let promise: EventLoopPromise<EntitledResponse>
        let expectedID: JSONValue?
        let timer: Scheduled<Void>
    }

    private let address: ServerAddress
    private let pushes: PushSink
    private let state: AsyncConnectionState
    /// The requests written and not yet answered, oldest first.
    private var waiting = CircularBuffer<Waiting>()
    private var nextSerial: UInt64 = 0
    /// Set once the connection is done: every later request fails with it.
    private var failure: EntitledClientError?

    init(address: ServerAddress, pushes: PushSink, state: AsyncConnectionState) {
        self.address = address
        self.pushes = pushes
        self.state = state
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        if let failure {
            let error: EntitledClientError = failure == .closed ? .closed : .connectionClosed(address: address)
            request.promise.fail(error)
            promise?.fail(error)
            return
        }
        nextSerial += 1
        let serial = nextSerial
        let seconds = Self.seconds(request.timeout)
        let timer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(request.timeout)) {
            guard self.waiting.contains(where: { $0.serial == serial }) else { return }
            self.shutDown(.timedOut(address: self.address, seconds: seconds), context: context)
        }
        waiting.append(Waiting(serial: serial, promise: request.promise, expectedID: request.expectedID, timer: timer))
        var buffer = context.channel.allocator.buffer(capacity: request.line.utf8.count + 1)
        buffer.writeString(request.line)
        buffer.writeInteger(UInt8(ascii: "\n"))
        context.write(wrapOutboundOut(buffer), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard failure == nil else { return }
        let line = unwrapInboundIn(data)
        if let push = EntitledPush(pushedLine: line) {
            pushes.deliver(push)
            return
        }
        guard let first = waiting.first else {
            shutDown(.malformedResponse(line: line, reason: "the server answered a request that was not sent"), context: context)
            return
        }
        let response: EntitledResponse
        do {
            response = try EntitledResponse(line: line)
        } catch {
            shutDown(error, context: context)
            return
        }
        if !response.isOK, response.error?.code == .tlsRequired {
            // The server's one line to a plain-text client on its TLS port; it closes the connection next.
            shutDown(.serverRequiresTLS(address: address), context: context)
            return
        }
        if let expected = first.expectedID, let answered = response["id"], answered != expected {
            shutDown(
                .malformedResponse(line: line, reason: "the answer's id is not the id of the request it should answer"),
                context: context
            )
            return
        }
        waiting.removeFirst()
        first.timer.cancel()
        first.promise.succeed(response)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is CloseByClient else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        shutDown(.closed, context: context)
        promise?.succeed()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case is ResponseLineTooLong:
            shutDown(.responseTooLarge(address: address, limit: EntitledAsyncConnection.maximumResponseLength), context: context)
        case let error as IOError where error.errnoCode == ECONNRESET || error.errnoCode == EPIPE:
            shutDown(.connectionClosed(address: address), context: context)
        case let error as IOError:
            shutDown(.connectionFailed(address: address, reason: systemErrorText(error.errnoCode)), context: context)
        default:
            shutDown(.connectionFailed(address: address, reason: String(describing: error)), context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        shutDown(.connectionClosed(address: address), context: context)
        context.fireChannelInactive()
    }

    /// Ends the connection: every request waiting fails with `error`, `pushes` ends, the channel closes.
    private func shutDown(_ error: EntitledClientError, context: ChannelHandlerContext) {
        guard failure == nil else { return }
        failure = error
        state.markClosed(error)
        while let entry = waiting.popFirst() {
            entry.timer.cancel()
            entry.promise.fail(error)
        }
        pushes.finish()
        context.close(promise: nil)
    }

    private static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
