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
import NIOSSL

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
/// Built on SwiftNIO rather than on blocking sockets with a reader thread: NIO's event loop gives non-blocking
/// I/O for TCP and Unix sockets, timers for the timeouts, and one thread that owns each connection's state
/// (the queue of requests waiting for answers lives in a channel handler and is only touched on the
/// channel's event loop), so there are no locks on the hot path and no thread per connection. The framing
/// is a small `ByteToMessageDecoder` of our own, and the matching a `ChannelDuplexHandler`, rather than
/// `NIOAsyncChannel`: the matching must happen in the pipeline, where a write and its place in the queue
/// are one step.
///
/// It is also the core of the synchronous `EntitledConnection`, which waits on its caller's thread for
/// the futures of `open` and `startSending`: there is one protocol client, with a blocking facade.
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
    /// With `tls`, the handshake is part of opening (within `timeout` more).
    ///
    /// - Throws: `cannotConnect` when no connection could be made; with `tls`, `untrustedCertificate`
    ///   (which check failed), `serverDoesNotSpeakTLS` or `tlsHandshakeFailed`; without it, on a TLS port,
    ///   `serverRequiresTLS` (once a request, `auth` included, is answered); `authenticationFailed`.
    public static func connect(
        to address: ServerAddress, timeout: Duration = .seconds(10), token: String? = nil, tls: EntitledClientTLS? = nil
    ) async throws(EntitledClientError) -> EntitledAsyncConnection {
        let (pushes, continuation) = AsyncStream.makeStream(
            of: EntitledPush.self, bufferingPolicy: .bufferingNewest(maximumQueuedPushes)
        )
        let connection: EntitledAsyncConnection
        do {
            connection = try await open(to: address, timeout: timeout, pushes: pushes, sink: PushSink(continuation), tls: tls).get()
        } catch let error as EntitledClientError {
            continuation.finish()
            throw error  // a failed TLS handshake, already explained
        } catch {
            continuation.finish()
            throw .cannotConnect(address: address, reason: connectFailureReason(error))
        }
        if let token {
            let answer = try await connection.send(.auth(token: token), timeout: timeout)
            if let failure = answer.error, failure.code != .unknownOp {
                await connection.close()
                throw .authenticationFailed(address: address, failure: failure)
            }
        }
        return connection
    }

    /// Opens the channel, within `timeout`, without authenticating; pushed lines go to `sink` (and
    /// `pushes` is what the connection hands out as its `pushes`). The future fails with NIO's error,
    /// which `connectFailureReason` turns into a `cannotConnect` reason. The core of `connect`, and of
    /// the synchronous `EntitledConnection`, which waits for the future on its caller's thread.
    static func open(
        to address: ServerAddress, timeout: Duration, pushes: AsyncStream<EntitledPush>, sink: PushSink,
        tls: EntitledClientTLS? = nil
    ) -> EventLoopFuture<EntitledAsyncConnection> {
        let state = AsyncConnectionState()
        // Completed by the TLS handshake, when there is one.
        let handshake = NIOLockedValueBox<EventLoopPromise<Void>?>(nil)
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(TimeAmount(timeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls, case .tcp(let host, _) = address {
                        let handler = try NIOSSLClientHandler(
                            context: tls.context, serverHostname: tls.serverHostname ?? host.serverNameIndication
                        )
                        // From here the promise is always completed: by the watcher (its removal included,
                        // when the connect fails), or below; NIO traps on a promise left pending.
                        let promise = channel.eventLoop.makePromise(of: Void.self)
                        let watcher = TLSHandshakeWatcher(
                            handshake: promise, address: address, expectedName: tls.serverHostname ?? host,
                            trusted: tls.trustedCertificates
                        )
                        handshake.withLockedValue { $0 = promise }
                        do {
                            try channel.pipeline.syncOperations.addHandlers(handler, watcher)
                        } catch {
                            promise.fail(error)
                            throw error
                        }
                    }
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineFrameDecoder(maximumLength: maximumResponseLength))
                    )
                    try channel.pipeline.syncOperations.addHandler(
                        ResponseMatcher(address: address, pushes: sink, state: state)
                    )
                }
            }
        let channel: EventLoopFuture<any Channel>
        switch address {
        case .tcp(let host, let port): channel = bootstrap.connect(host: host, port: port)
        case .unixSocket(let path): channel = bootstrap.connect(unixDomainSocketPath: path)
        }
        return channel.flatMap { channel in
            let connection = EntitledAsyncConnection(address: address, channel: channel, state: state, pushes: pushes)
            guard let promise = handshake.withLockedValue({ $0 }) else { return channel.eventLoop.makeSucceededFuture(connection) }
            // The handshake is bounded like the connect: a server that never answers it must not hang the
            // client (the request timeouts only start with the first request).
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            let timer = channel.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
                promise.fail(
                    EntitledClientError.tlsHandshakeFailed(
                        address: address, reason: "no TLS handshake within \(EntitledClientError.format(seconds)) s"
                    )
                )
            }
            return promise.futureResult.flatMapError { error in
                timer.cancel()
                channel.close(promise: nil)
                return channel.eventLoop.makeFailedFuture(error)
            }.map {
                timer.cancel()
                return connection
            }
        }
    }

    /// Whether the connection is open: neither side has closed it and no request failed on it.
    public var isOpen: Bool { state.closeReason == nil }

    /// Why the connection closed; `nil` while it is open.
    public var closeReason: EntitledClientError? { state.closeReason }

    /// How many `send`s are waiting for their answers.
    public var inFlight: Int { state.inFlight }

    /// How long `send` waits for an answer when given no timeout.
    public static let defaultRequestTimeout: Duration = .seconds(10)

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
    public func send(_ request: EntitledRequest, timeout: Duration = defaultRequestTimeout) async throws(EntitledClientError)
        -> EntitledResponse
    {
        try await send(
            line: request.jsonLine, expectedID: request.fields.last(where: { $0.key == "id" })?.value, timeout: timeout
        )
    }

    /// Sends one protocol line exactly as given (it must not contain a newline) and waits for its
    /// answer, as `send(_:timeout:)` does but without checking the answer's `id`: for requests this
    /// library has no constructor for, and for conformance tools that must send the bytes they were given.
    public func send(line: String, timeout: Duration = defaultRequestTimeout) async throws(EntitledClientError) -> EntitledResponse {
        try await send(line: line, expectedID: nil, timeout: timeout)
    }

    private func send(line: String, expectedID: JSONValue?, timeout: Duration) async throws(EntitledClientError)
        -> EntitledResponse
    {
        if let reason = state.closeReason {
            throw reason == .closed ? .closed : .connectionClosed(address: address)
        }
        state.adjustInFlight(by: 1)
        defer { state.adjustInFlight(by: -1) }
        let promise = startSending(line: line, expectedID: expectedID, timeout: timeout)
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

    /// Writes one request line (without its newline) and returns the promise its answer completes: the
    /// core of `send`, and of the synchronous `EntitledConnection`, which waits for it on its caller's
    /// thread. `expectedID`, when given, must be the answer's `id`. Fails as `send` throws.
    func startSending(line: String, expectedID: JSONValue?, timeout: Duration) -> EventLoopPromise<EntitledResponse> {
        let promise = channel.eventLoop.makePromise(of: EntitledResponse.self)
        if line.utf8.contains(UInt8(ascii: "\n")) {
            promise.fail(EntitledClientError.lineContainsNewline)
            return promise
        }
        if let reason = state.closeReason {
            promise.fail(reason == .closed ? EntitledClientError.closed : .connectionClosed(address: address))
            return promise
        }
        let written = channel.eventLoop.makePromise(of: Void.self)
        let address = self.address
        // A write that never reached the handler (the channel closed meanwhile) fails here; one the
        // handler queued is failed by it, and the second failure is ignored.
        written.futureResult.whenFailure { _ in promise.fail(EntitledClientError.connectionClosed(address: address)) }
        let pipelined = PipelinedRequest(line: line, expectedID: expectedID, timeout: timeout, promise: promise)
        channel.writeAndFlush(pipelined, promise: written)
        return promise
    }

    /// Completes once the channel's event loop has handled what the kernel had reported before: a
    /// server's end of stream, or lines it sent, that had arrived are then processed (`isOpen`, the
    /// pushes delivered). Lets a synchronous caller look at the connection's state the way a `poll`
    /// on the socket would.
    func settled() -> EventLoopFuture<Void> {
        channel.eventLoop.submit {}
    }

    /// Starts closing the connection as `close()` does, and returns the future of the channel's close.
    func startClosing() -> EventLoopFuture<Void> {
        channel.triggerUserOutboundEvent(CloseByClient(), promise: nil)
        return channel.closeFuture
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
        if let error = error as? IOError { return systemErrorText(error.errnoCode) }
        if let error = error as? SocketAddressError.UnknownHost { return error.errorDescription.lowercasedFirstLetter }
        if case SocketAddressError.unixDomainSocketPathTooLong = error {
            return "the socket path is longer than \(MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1) bytes"
        }
        if case ChannelError.connectTimeout = error { return "timed out" }
        return String(describing: error)
    }
}

// MARK: - State shared with the pipeline
