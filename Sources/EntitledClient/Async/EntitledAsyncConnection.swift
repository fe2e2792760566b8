#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// An asynchronous connection to an `entitled` server, for many tasks at once.
///
/// Concurrent `send`s are pipelined (Protocol/PROTOCOL.md §1, Framing): each request is written as soon as
/// it is sent, without waiting for the answers of the earlier ones, and since the server answers a
/// connection's requests in the order it received them, the n-th answer belongs to the n-th request
/// written. Lines with `push` and no `ok` answer no request: they go to `pushes`.
///
/// When that order can no longer be trusted the connection is closed, and every request in flight fails
/// with the same error: a request that got no answer within its timeout (its answer might still come and
/// would be taken for the next request's), a dropped connection, a line that is no answer. A closed
/// connection stays closed; open a new one (or use `EntitledPool`, which does). A request is never sent
/// twice: one that failed may or may not have been carried out.
///
/// Built on SwiftNIO rather than on `LineSocket` with a reader thread: NIO's event loop gives non-blocking
/// I/O for TCP and Unix sockets, timers for the timeouts, and one thread that owns each connection's state
/// (the queue of requests waiting for answers lives in a channel handler and is only touched on the
/// channel's event loop), so there are no locks on the hot path and no thread per connection. The framing
/// is a small `ByteToMessageDecoder` of our own, and the matching a `ChannelDuplexHandler`, rather than
/// `NIOAsyncChannel`: the matching must happen in the pipeline, where a write and its place in the queue
/// are one step.
public final class EntitledAsyncConnection: Sendable {
    /// The largest response line accepted (as `EntitledConnection.maximumResponseLength`).
    public static let maximumResponseLength = EntitledConnection.maximumResponseLength
    /// The most pushed lines kept while nobody reads `pushes`; beyond it the oldest are dropped.
    public static let maximumQueuedPushes = 10_000

    public let address: ServerAddress
    /// The lines the server pushed after a `watch`, in the order they came. The stream ends when the
    /// connection closes (the server forgets the connection's watches then). One consumer at a time.
    public let pushes: AsyncStream<EntitledPush>

    private let channel: any Channel
    private let state: AsyncConnectionState

    private init(address: ServerAddress, channel: any Channel, state: AsyncConnectionState, pushes: AsyncStream<EntitledPush>) {
        self.address = address
        self.channel = channel
        self.state = state
        self.pushes = pushes
    }

    deinit {
        channel.close(promise: nil)
    }

    /// Opens a connection, within `timeout`. With a `token`, an `auth` request is sent first (a server
    /// without authentication answers it `unknown_op`, which is accepted, as `EntitledConnection` does).
    public static func connect(
        to address: ServerAddress, timeout: Duration = .seconds(10), token: String? = nil
    ) async throws(EntitledClientError) -> EntitledAsyncConnection {
        let (pushes, continuation) = AsyncStream.makeStream(
            of: EntitledPush.self, bufferingPolicy: .bufferingNewest(maximumQueuedPushes)
        )
        let state = AsyncConnectionState()
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(TimeAmount(timeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineFrameDecoder(maximumLength: maximumResponseLength))
                    )
                    try channel.pipeline.syncOperations.addHandler(
                        ResponseMatcher(address: address, pushes: continuation, state: state)
                    )
                }
            }
        let channel: any Channel
        do {
            switch address {
            case .tcp(let host, let port): channel = try await bootstrap.connect(host: host, port: port).get()
            case .unixSocket(let path): channel = try await bootstrap.connect(unixDomainSocketPath: path).get()
            }
        } catch {
            continuation.finish()
            throw .cannotConnect(address: address, reason: connectFailureReason(error))
        }
        let connection = EntitledAsyncConnection(address: address, channel: channel, state: state, pushes: pushes)
        if let token {
            let answer = try await connection.send(.auth(token: token), timeout: timeout)
            if let failure = answer.error, failure.code != "unknown_op" {
                await connection.close()
                throw .authenticationFailed(address: address, failure: failure)
            }
        }
        return connection
    }

    /// Whether the connection is open: neither side has closed it and no request failed on it.
    public var isOpen: Bool { state.closeReason == nil }

    /// Why the connection closed; `nil` while it is open.
    public var closeReason: EntitledClientError? { state.closeReason }

    /// How many `send`s are waiting for their answers.
    public var inFlight: Int { state.inFlight }

    /// Sends one request and waits for its answer; an error answer (`"ok":false`) is returned, not thrown.
    ///
    /// When the request has an `id`, the answer must carry the same one, else the stream is out of step
    /// and the connection closes (`malformedResponse`).
    ///
    /// - Throws: `timedOut` when no answer came within `timeout` (the connection then closes, and every
    ///   request in flight on it fails the same way); `connectionClosed`, `connectionFailed`,
    ///   `malformedResponse` or `responseTooLarge` when the connection failed (idem); `closed` after
    ///   `close()`; `cancelled` when the waiting task was cancelled (the request stays in the pipeline and
    ///   its answer is dropped when it comes).
    public func send(_ request: EntitledRequest, timeout: Duration = .seconds(10)) async throws(EntitledClientError)
        -> EntitledResponse
    {
        if let reason = state.closeReason {
            throw reason == .closed ? .closed : .connectionClosed(address: address)
        }
        let promise = channel.eventLoop.makePromise(of: EntitledResponse.self)
        let written = channel.eventLoop.makePromise(of: Void.self)
        let address = self.address
        // A write that never reached the handler (the channel closed meanwhile) fails here; one the
        // handler queued is failed by it, and the second failure is ignored.
        written.futureResult.whenFailure { _ in promise.fail(EntitledClientError.connectionClosed(address: address)) }
        let pipelined = PipelinedRequest(
            line: request.jsonLine, expectedID: request.fields.last(where: { $0.key == "id" })?.value,
            timeout: timeout, promise: promise
        )
        state.adjustInFlight(by: 1)
        defer { state.adjustInFlight(by: -1) }
        channel.writeAndFlush(pipelined, promise: written)
        do {
            return try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                // Completing a promise twice is a no-op in NIO: the answer, when it comes, is dropped.
                promise.fail(EntitledClientError.cancelled)
            }
        } catch let error as EntitledClientError {
            throw error
        } catch {
            throw .connectionFailed(address: address, reason: String(describing: error))
        }
    }

    /// Closes the connection: requests in flight fail with `closed`, `pushes` ends. Returns once closed.
    public func close() async {
        let closed = channel.eventLoop.makePromise(of: Void.self)
        channel.triggerUserOutboundEvent(CloseByClient(), promise: closed)
        try? await closed.futureResult.get()
        try? await channel.closeFuture.get()
    }

    /// A reason a person can read, such as `connection refused`, for a failed connect.
    static func connectFailureReason(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first { return connectFailureReason(first.error) }
            if let dns = error.dnsAError ?? error.dnsAAAAError { return connectFailureReason(dns) }
            return "no address to connect to"
        }
        if let error = error as? IOError { return LineSocket.errorText(error.errnoCode) }
        if case ChannelError.connectTimeout = error { return "timed out" }
        return String(describing: error)
    }
}

// MARK: - State shared with the pipeline

/// What the connection and its handler both read: whether (and why) it closed, how many requests wait.
final class AsyncConnectionState: Sendable {
    private struct Values {
        var closeReason: EntitledClientError?
        var inFlight = 0
    }

    private let values = NIOLockedValueBox(Values())

    var closeReason: EntitledClientError? { values.withLockedValue { $0.closeReason } }
    var inFlight: Int { values.withLockedValue { $0.inFlight } }

    func markClosed(_ reason: EntitledClientError) {
        values.withLockedValue { if $0.closeReason == nil { $0.closeReason = reason } }
    }

    func adjustInFlight(by change: Int) {
        values.withLockedValue { $0.inFlight += change }
    }
}

/// A request on its way through the pipeline, with the promise its answer completes.
struct PipelinedRequest: Sendable {
    let line: String
    let expectedID: JSONValue?
    let timeout: Duration
    let promise: EventLoopPromise<EntitledResponse>
}

/// The user outbound event `close()` sends: fail the requests in flight with `closed`, close the channel.
struct CloseByClient: Sendable {}

/// The decoder's error for a line longer than the limit.
struct ResponseLineTooLong: Error {}

// MARK: - Framing

/// Splits the byte stream into lines (without `\n`, and without one `\r` before it) as Strings.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = String

    let maximumLength: Int
    /// How many readable bytes were already searched for a newline.
    private var scanned = 0

    init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        guard let newline = view.dropFirst(scanned).firstIndex(of: UInt8(ascii: "\n")) else {
            scanned = view.count
            guard view.count <= maximumLength + 1 else { throw ResponseLineTooLong() }
            return .needMoreData
        }
        var line = buffer.readString(length: view.distance(from: view.startIndex, to: newline)) ?? ""
        buffer.moveReaderIndex(forwardBy: 1)
        if line.utf8.last == UInt8(ascii: "\r") { line.removeLast() }
        scanned = 0
        context.fireChannelRead(Self.wrapInboundOut(line))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        // A last line without a newline is no complete answer: the connection's end fails what waits.
        buffer.clear()
        return .needMoreData
    }
}

// MARK: - Matching answers to requests

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
    private let pushes: AsyncStream<EntitledPush>.Continuation
    private let state: AsyncConnectionState
    /// The requests written and not yet answered, oldest first.
    private var waiting = CircularBuffer<Waiting>()
    private var nextSerial: UInt64 = 0
    /// Set once the connection is done: every later request fails with it.
    private var failure: EntitledClientError?

    init(address: ServerAddress, pushes: AsyncStream<EntitledPush>.Continuation, state: AsyncConnectionState) {
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
            pushes.yield(push)
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
            shutDown(.connectionFailed(address: address, reason: LineSocket.errorText(error.errnoCode)), context: context)
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
