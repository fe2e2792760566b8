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

    private struct State {
        var listeners: [any Channel] = []
        var connections: [ObjectIdentifier: any Channel] = [:]
        var isStopped = false
    }

    /// - Parameters:
    ///   - onReady: called once by `run()` with the addresses actually bound (port 0 resolved).
    public init(
        store: EntitlementStore,
        configuration: ServerConfiguration = ServerConfiguration(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "entitled"),
        onReady: @escaping @Sendable ([SocketAddress]) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.processor = RequestProcessor(store: store)
        self.group = group
        self.logger = logger
        self.onReady = onReady
    }

    /// Binds every configured address and starts accepting connections.
    /// - Returns: the bound addresses, TCP first.
    @discardableResult
    public func start() async throws -> [SocketAddress] {
        guard configuration.maximumLineLength >= 1 else {
            throw ServerError.invalidLineLimit(configuration.maximumLineLength)
        }
        guard configuration.tcp != nil || configuration.unixSocketPath != nil else {
            throw ServerError.nothingToListenOn
        }
        var listeners: [any Channel] = []
        do {
            if let tcp = configuration.tcp {
                listeners.append(try await bindTCP(tcp))
            }
            if let path = configuration.unixSocketPath {
                listeners.append(try await bindUnix(path))
            }
        } catch {
            for listener in listeners { try? await listener.close() }
            throw error
        }
        state.withLockedValue { $0.listeners = listeners }
        return listeners.compactMap(\.localAddress)
    }

    /// Stops accepting, closes every connection and removes the Unix socket file.
    public func stop() async {
        let (listeners, connections) = state.withLockedValue { state in
            state.isStopped = true
            defer {
                state.listeners = []
                state.connections = [:]
            }
            return (state.listeners, Array(state.connections.values))
        }
        for listener in listeners { try? await listener.close() }
        for connection in connections { try? await connection.close() }
        if let path = configuration.unixSocketPath, !listeners.isEmpty {
            unlink(path)
        }
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
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineFrameDecoder(maximumLineLength: maximumLineLength))
                    )
                    try channel.pipeline.syncOperations.addHandler(
                        RequestHandler(processor: processor, logger: logger)
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

    /// Remembers an accepted connection until it closes, so `stop()` can close it.
    private func track(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let accepted = state.withLockedValue { state in
            guard !state.isStopped else { return false }
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
