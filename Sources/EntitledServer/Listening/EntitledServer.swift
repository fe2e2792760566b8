import Dispatch
import EntitledCore
import EntitledWire
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The `entitled` socket server: accepts connections on TCP and/or a Unix socket and answers the
/// line protocol from an `EntitlementStore`.
///
/// Connections are served by `configuration.eventLoops` event loops (`ServingLoop`), each a thread on
/// its own epoll set; the first loop also accepts, and hands connections to the loops in turn.
///
/// Use `start()` and `stop()` directly (tests do), or run it as a swift-service-lifecycle `Service`:
/// `run()` starts, reports the bound addresses to `onReady`, serves until graceful shutdown, then stops.
public final class EntitledServer: Service, Sendable {
    /// The version of this server.
    public static let version = "0.1.0"

    public let configuration: ServerConfiguration
    private let processor: RequestProcessor
    let logger: Logger
    private let onReady: @Sendable ([SocketAddress]) -> Void
    private let state = NIOLockedValueBox(State())
    private let openConnections: NIOLockedValueBox<OpenConnections>
    /// The tokens in force, replaced by `reloadAccessTokens()`; `nil` without authentication.
    let accessTokens: AccessTokenSource?
    /// The loops' counters, for `stats` and the metrics endpoint; they count from the server's creation.
    public let counters: ServerCounters

    private struct State {
        var lifecycle = Lifecycle.idle
        /// The Unix socket file this server created, so `stop()` removes that file and not a successor's.
        var socketFile: FileIdentity?
    }

    /// A server starts once and stops once.
    private enum Lifecycle {
        case idle
        case starting
        case running(loops: [ServingLoop])
        case stopped
    }

    /// A server answering from `store` alone, in memory (tests, tools).
    /// - Parameters:
    ///   - onReady: called once by `run()` with the addresses actually bound (port 0 resolved).
    public convenience init(
        store: EntitlementStore,
        configuration: ServerConfiguration = ServerConfiguration(),
        logger: Logger = Logger(label: "entitled"),
        onReady: @escaping @Sendable ([SocketAddress]) -> Void = { _ in }
    ) {
        self.init(processor: RequestProcessor(store: store), configuration: configuration, logger: logger, onReady: onReady)
    }

    /// A server answering with `processor`: from a `DurableStore` in production.
    /// - Parameters:
    ///   - onReady: called once by `run()` with the addresses actually bound (port 0 resolved).
    public init(
        processor: RequestProcessor,
        configuration: ServerConfiguration = ServerConfiguration(),
        logger: Logger = Logger(label: "entitled"),
        onReady: @escaping @Sendable ([SocketAddress]) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.processor = processor
        self.logger = logger
        self.onReady = onReady
        accessTokens = configuration.accessTokens.map { AccessTokenSource($0, file: configuration.accessTokenFile) }
        let openConnections = NIOLockedValueBox(OpenConnections())
        self.openConnections = openConnections
        // An invalid loop count is refused by `start()`; the counters need a count that makes sense now.
        let loopCount = min(max(configuration.eventLoops, 1), ServerConfiguration.largestEventLoopCount)
        counters = ServerCounters(loopCount: loopCount, startedAt: Timestamp.now(), openConnections: openConnections)
    }

    /// The server's counters now, as `stats` answers them.
    public func statistics() -> ServerStatistics {
        counters.report(processor: processor)
    }

    /// The loops serving now; none before `start()` or after `stop()`.
    var runningLoops: [ServingLoop] {
        state.withLockedValue { state in
            guard case .running(let loops) = state.lifecycle else { return [] }
            return loops
        }
    }

    /// How many client connections are open right now.
    public var connectionCount: Int { openConnections.withLockedValue { $0.total } }

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
        if let tcp = configuration.tcp, configuration.accessTokens == nil,
            !configuration.allowsUnauthenticatedRemoteClients, !LoopbackAddress.isLoopback(tcp.host)
        {
            throw ServerError.unauthenticatedRemoteAddress(host: tcp.host)
        }
        guard configuration.unixSocketMode & ~0o777 == 0 else {
            throw ServerError.invalidSocketMode(configuration.unixSocketMode)
        }
        try state.withLockedValue { state in
            guard case .idle = state.lifecycle else { throw ServerError.alreadyStarted }
            state.lifecycle = .starting
        }
        guard (1...ServerConfiguration.largestEventLoopCount).contains(configuration.eventLoops) else {
            state.withLockedValue { $0.lifecycle = .idle }
            throw ServerError.invalidEventLoopCount(configuration.eventLoops)
        }
        guard (0...ServerConfiguration.largestBusyPollMicroseconds).contains(configuration.busyPollMicroseconds) else {
            state.withLockedValue { $0.lifecycle = .idle }
            throw ServerError.invalidBusyPoll(configuration.busyPollMicroseconds)
        }
        guard configuration.maximumConnections >= 1, configuration.maximumRequestsPerTurn >= 1,
            configuration.idleTimeoutSeconds >= 0, configuration.idleTimeoutSeconds <= 86_400 * 365,
            (0...3600).contains(configuration.shutdownTimeoutSeconds),
            (0...ServerConfiguration.largestMinimumSequenceWaitMilliseconds).contains(configuration.minimumSequenceWaitMilliseconds)
        else {
            state.withLockedValue { $0.lifecycle = .idle }
            throw ServerError.invalidLimit(
                "connections \(configuration.maximumConnections), requests per turn \(configuration.maximumRequestsPerTurn) (both at least 1), idle timeout \(configuration.idleTimeoutSeconds) s (0 to a year), shutdown timeout \(configuration.shutdownTimeoutSeconds) s (0 to 3600), minSeq wait \(configuration.minimumSequenceWaitMilliseconds) ms (0 to \(ServerConfiguration.largestMinimumSequenceWaitMilliseconds))"
            )
        }
        // Sockets a `LoadingListener` bound while the store loaded are served as they are; else bound now.
        let bound: BoundListeners
        do {
            bound = try configuration.boundListeners ?? BoundListeners.bind(configuration)
        } catch {
            state.withLockedValue { $0.lifecycle = .idle }
            throw error
        }
        let (listeners, socketFile) = (bound.sockets, bound.socketFile)
        let loops: [ServingLoop]
        do {
            loops = try makeLoops()
        } catch {
            for listener in listeners { listener.close() }
            removeSocketFile(ifStill: socketFile)
            state.withLockedValue { $0.lifecycle = .idle }
            throw ServerError.bindFailed(address: "event loops", reason: "\(error)")
        }
        let stoppedWhileStarting = state.withLockedValue { state in
            guard case .starting = state.lifecycle else { return true }
            state.lifecycle = .running(loops: loops)
            state.socketFile = socketFile
            return false
        }
        if stoppedWhileStarting {
            for listener in listeners { listener.close() }
            removeSocketFile(ifStill: socketFile)
            throw ServerError.alreadyStopped
        }
        for loop in loops { loop.start() }
        processor.log?.serving(loops)
        let acceptor = loops[0]
        for listener in listeners {
            acceptor.execute { acceptor.listen(on: listener) }
        }
        return listeners.map(\.address)
    }

    /// Stops accepting; lets every connection finish what it has read (answers to writes once the log
    /// holds them) for at most `configuration.shutdownTimeoutSeconds`; then closes what is left and removes
    /// the Unix socket file this server created. A stopped server cannot be started again.
    public func stop() async {
        let (loops, socketFile) = state.withLockedValue { state in
            var loops: [ServingLoop] = []
            if case .running(let running) = state.lifecycle { loops = running }
            state.lifecycle = .stopped
            defer { state.socketFile = nil }
            return (loops, state.socketFile)
        }
        processor.log?.serving(nil)
        if !loops.isEmpty {
            // Each loop closes its listeners and connections on its own thread; wait for them off the
            // caller's (cooperative) thread.
            let drain = UInt64((configuration.shutdownTimeoutSeconds * 1000).rounded())
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    // Every loop drains at the same time: the deadline bounds the whole stop.
                    for loop in loops { loop.beginStopping(drainingFor: drain) }
                    for loop in loops { loop.waitUntilStopped() }
                    done.resume()
                }
            }
        }
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
    private func makeLoops() throws(SocketError) -> [ServingLoop] {
        let connections = openConnections
        let context = ConnectionContext(
            processor: processor,
            maximumLineLength: configuration.maximumLineLength,
            maximumRequestsPerTurn: configuration.maximumRequestsPerTurn,
            minimumSequenceWaitMilliseconds: UInt64(configuration.minimumSequenceWaitMilliseconds),
            heldReads: configuration.unsyncedReads == .hold ? processor.log?.logProgress : nil,
            usesIoUring: configuration.usesIoUring,
            tls: configuration.tls,
            accessTokens: accessTokens,
            reloadAccessTokens: { [weak self] in
                guard let self else { return .failure(.noAuthentication) }
                return Result { () throws(TokenReloadError) in try self.reloadAccessTokens() }
            },
            statistics: counters,
            logger: logger,
            onClose: { kind in connections.withLockedValue { $0[kind] -= 1 } }
        )
        var loops: [ServingLoop] = []
        for index in 0..<configuration.eventLoops {
            loops.append(
                try ServingLoop(
                    index: index, context: context, statistics: counters.loops[index], busyPollNanoseconds: UInt64(configuration.busyPollMicroseconds) * 1000,
                    idleTimeoutMilliseconds: UInt64((configuration.idleTimeoutSeconds * 1000).rounded()),
                    authenticationTimeoutMilliseconds: accessTokens == nil ? 0 : UInt64((configuration.authenticationTimeoutSeconds * 1000).rounded()),
                    longestCommitHoldNanoseconds: configuration.longestCommitHoldNanoseconds, logger: logger
                )
            )
        }
        let acceptor = loops[0]
        let everyLoop = loops
        var next = 0
        let refusal = ConnectionRefusal(limit: configuration.maximumConnections, tcpIsTLS: configuration.tls != nil, logger: logger)
        // Runs on the accepting loop's thread only.
        acceptor.distribute = { descriptor, kind in
            let admitted = connections.withLockedValue { open in
                guard open[kind] < refusal.limit else { return false }
                open[kind] += 1
                return true
            }
            guard admitted else {
                acceptor.statistics.record(.refused)
                acceptor.statistics.recordError(.busy)
                refusal.refuse(descriptor, kind: kind)
                return
            }
            acceptor.statistics.record(.accepted)
            let target = everyLoop[next]
            next = (next + 1) % everyLoop.count
            if target === acceptor {
                target.adopt(descriptor, kind: kind)
            } else if !target.execute({ target.adopt(descriptor, kind: kind) }) {
                Glibc.close(descriptor)
                connections.withLockedValue { $0[kind] -= 1 }
            }
        }
        return loops
    }


    /// Removes the Unix socket file if it is still the one this server bound: another server may have
    /// replaced a file this one no longer listens on.
    private func removeSocketFile(ifStill identity: FileIdentity?) {
        guard let identity, let path = configuration.unixSocketPath, FileIdentity(path: path) == identity else {
            return
        }
        unlink(path)
    }
}
