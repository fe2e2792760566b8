import EntitledCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The `entitled` socket server: accepts connections on TCP and/or a Unix socket and answers the
/// line protocol from an `EntitlementStore`.
///
/// Use `start()` and `stop()` directly (tests do), or run it as a swift-service-lifecycle `Service`:
/// `run()` starts, reports the bound addresses to `onReady`, serves until graceful shutdown, then stops.
public final class EntitledServer: Service, Sendable {
    /// The version of this server.
    public static let version = "0.1.0"

    public let configuration: ServerConfiguration
    private let processor: RequestProcessor
    private let group: any EventLoopGroup
    private let logger: Logger
    private let onReady: @Sendable ([SocketAddress]) -> Void
    private let state = NIOLockedValueBox(State())
    /// One log committer per event loop, made when the loop accepts its first connection.
    private let committers = NIOLockedValueBox([ObjectIdentifier: LoopCommitter]())

    private struct State {
        var lifecycle = Lifecycle.idle
        var connections: [ObjectIdentifier: any Channel] = [:]
        /// The Unix socket file this server created, so `stop()` removes that file and not a successor's.
        var socketFile: FileIdentity?
    }

    /// A server starts once and stops once.
    private enum Lifecycle {
        case idle
        case starting
        case running(listeners: [any Channel])
        case stopped
    }

    /// A server answering from `store` alone, in memory (tests, tools).
    /// - Parameters:
    ///   - onReady: called once by `run()` with the addresses actually bound (port 0 resolved).
    public convenience init(
        store: EntitlementStore,
        configuration: ServerConfiguration = ServerConfiguration(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "entitled"),
        onReady: @escaping @Sendable ([SocketAddress]) -> Void = { _ in }
    ) {
        self.init(processor: RequestProcessor(store: store), configuration: configuration, group: group, logger: logger, onReady: onReady)
    }

    /// A server answering with `processor`: from a `DurableStore` in production.
    /// - Parameters:
    ///   - onReady: called once by `run()` with the addresses actually bound (port 0 resolved).
    public init(
        processor: RequestProcessor,
        configuration: ServerConfiguration = ServerConfiguration(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "entitled"),
        onReady: @escaping @Sendable ([SocketAddress]) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.processor = processor
        self.group = group
        self.logger = logger
        self.onReady = onReady
    }

    /// Binds every configured address and starts accepting connections.
    /// - Returns: the bound addresses, TCP first.
    @discardableResult
    public func start() async throws -> [SocketAddress] {
        guard (1...ServerConfiguration.largestMaximumLineLength).contains(configuration.maximumLineLength) else {
            throw ServerError.invalidLineLimit(configuration.maximumLineLength)
        }
        guard configuration.tcp != nil || configuration.unixSocketPath != nil else {
            throw ServerError.nothingToListenOn
        }
        try state.withLockedValue { state in
            guard case .idle = state.lifecycle else { throw ServerError.alreadyStarted }
            state.lifecycle = .starting
        }
        var listeners: [any Channel] = []
        var socketFile: FileIdentity?
        do {
            if let tcp = configuration.tcp {
                listeners.append(try await bindTCP(tcp))
            }
            if let path = configuration.unixSocketPath {
                listeners.append(try await bindUnix(path))
                socketFile = FileIdentity(path: path)
            }
        } catch {
            for listener in listeners { try? await listener.close() }
            state.withLockedValue { $0.lifecycle = .idle }
            throw error
        }
        let stoppedWhileStarting = state.withLockedValue { state in
            guard case .starting = state.lifecycle else { return true }
            state.lifecycle = .running(listeners: listeners)
            state.socketFile = socketFile
            return false
        }
        if stoppedWhileStarting {
            for listener in listeners { try? await listener.close() }
            removeSocketFile(ifStill: socketFile)
            throw ServerError.alreadyStopped
        }
        return listeners.compactMap(\.localAddress)
    }

    /// Stops accepting, closes every connection and removes the Unix socket file this server created.
    /// A stopped server cannot be started again.
    public func stop() async {
        let (listeners, connections, socketFile) = state.withLockedValue { state in
            var listeners: [any Channel] = []
            if case .running(let running) = state.lifecycle { listeners = running }
            state.lifecycle = .stopped
            defer {
                state.connections = [:]
                state.socketFile = nil
            }
            return (listeners, Array(state.connections.values), state.socketFile)
        }
        for listener in listeners { try? await listener.close() }
        for connection in connections { try? await connection.close() }
        removeSocketFile(ifStill: socketFile)
    }

    /// Starts, reports readiness, serves until a graceful shutdown is requested (SIGTERM, SIGINT) or the
    /// task is cancelled, then stops.
    public func run() async throws {
        let addresses = try await start()
        onReady(addresses)
        try? await gracefulShutdown()
        logger.info("shutting down: no longer accepting connections")
        await stop()
    }
}

// MARK: Binding

extension EntitledServer {
    private func bootstrap() -> ServerBootstrap {
        let processor = self.processor
        let logger = self.logger
        let maximumLineLength = configuration.maximumLineLength
        return ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { [weak self] channel in
                self?.track(channel)
                let committer = self?.committer(for: channel.eventLoop)
                return channel.eventLoop.makeCompletedFuture {
                    // Stops reading from a client that does not read its responses, once more than the
                    // write buffer's high water mark (64 KiB by default) waits to be sent to it.
                    try channel.pipeline.syncOperations.addHandler(BackPressureHandler())
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineFrameDecoder(maximumLineLength: maximumLineLength))
                    )
                    try channel.pipeline.syncOperations.addHandler(
                        RequestHandler(processor: processor, committer: committer, logger: logger)
                    )
                }
            }
    }

    private func bindTCP(_ address: ServerConfiguration.TCPAddress) async throws -> any Channel {
        do {
            return try await bootstrap()
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .bind(host: address.host, port: address.port).get()
        } catch {
            throw ServerError.bindFailed(address: "\(address.host):\(address.port)", reason: "\(error)")
        }
    }

    private func bindUnix(_ path: String) async throws -> any Channel {
        // A socket file left by a server that died is removed; one that a live server answers on is not.
        if await isAcceptingConnections(unixSocketPath: path) {
            throw ServerError.socketInUse(path: path)
        }
        do {
            return try await bootstrap().bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
        } catch {
            throw ServerError.bindFailed(address: path, reason: "\(error)")
        }
    }

    private func isAcceptingConnections(unixSocketPath path: String) async -> Bool {
        guard let channel = try? await ClientBootstrap(group: group).connect(unixDomainSocketPath: path).get() else {
            return false
        }
        try? await channel.close()
        return true
    }

    /// Removes the Unix socket file if it is still the one this server bound: another server may have
    /// replaced a file this one no longer listens on.
    private func removeSocketFile(ifStill identity: FileIdentity?) {
        guard let identity, let path = configuration.unixSocketPath, FileIdentity(path: path) == identity else {
            return
        }
        unlink(path)
    }

    /// The committer of `eventLoop`'s connections, or `nil` for a server without a log.
    private func committer(for eventLoop: any EventLoop) -> LoopCommitter? {
        guard let log = processor.durable?.log else { return nil }
        return committers.withLockedValue { committers in
            let key = ObjectIdentifier(eventLoop)
            if let existing = committers[key] { return existing }
            let committer = LoopCommitter(eventLoop: eventLoop, log: log)
            committers[key] = committer
            return committer
        }
    }

    /// Remembers an accepted connection until it closes, so `stop()` can close it.
    private func track(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let accepted = state.withLockedValue { state in
            if case .stopped = state.lifecycle { return false }
            state.connections[id] = channel
            return true
        }
        guard accepted else {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { [weak self] _ in
            _ = self?.state.withLockedValue { $0.connections.removeValue(forKey: id) }
        }
    }
}
