/// A small pool of `EntitledAsyncConnection`s to one server, or to the nodes of one cluster, for an
/// application's many tasks.
///
/// `send` takes the open connection with the fewest requests in flight; the requests of one connection are
/// pipelined. A connection that is down is opened again lazily, by the next request, and after a failed
/// attempt only once a backoff has passed (`initialBackoff`, doubling up to `maximumBackoff`); a request
/// that finds no open connection and none that may be attempted yet fails at once with the last connect
/// error, rather than waiting.
///
/// Several nodes (`init(addresses:configuration:)`): connection `i` goes to node `(s + i) mod n`, where
/// `s` is picked at random for each pool, so the pools of many processes spread over every node (keep at
/// least as many connections as nodes for one pool to use them all). A connect that a node refuses, or a
/// node in backoff, moves on to the next node at once. A connection that drops is opened again starting
/// from its own node, so connections return to a node that comes back as their connections are renewed.
///
/// A write is never sent twice (a `grant` sent twice creates two memberships): a write lost with its
/// connection fails with the connection's error, and the caller decides; with an idempotency key
/// (`grant(idempotencyKey:)`, `event`'s event id) sending it again is safe. A read
/// (`EntitledRequest.isRead`: `check`, `memberships`, `customer`, ...) lost with its connection (dropped,
/// failed, or timed out) is sent again on a connection to another node, at most once per node, when the
/// pool has several: a read may then take up to its timeout once per node. A request the server answered
/// is never sent again, whatever the answer, but one: an error answer is returned (or thrown by the typed
/// conveniences) as it came, `over_limit` (a read bigger than one request may be) included, since asking
/// again, on any node, gets the same answer. The exception is `loading` (a server starting: nothing was
/// carried out, reads and writes alike): the pool closes that connection and sends the request again on a
/// new one, after `initialBackoff`, doubling up to `maximumBackoff`, until the request's timeout has
/// passed; then it returns the `loading` answer. A read whose connection closes after such an answer (the
/// server closes them as it becomes ready) is sent again too.
///
/// Watches belong to a connection, so `watch` opens a dedicated one; a `watch` sent through `send`
/// would bind its pushes to a pooled connection nobody reads from.
public actor EntitledPool {
    public struct Configuration: Sendable, Hashable {
        /// How many connections the pool keeps (at least 1), over all its nodes.
        public var connections: Int
        /// The timeout of a request when `send` is given none.
        public var requestTimeout: Duration
        /// How long a connect may take.
        public var connectTimeout: Duration
        /// The wait after a first failed connect to a node; it doubles with each further failure...
        public var initialBackoff: Duration
        /// ...up to this.
        public var maximumBackoff: Duration
        /// Sent in an `auth` request on each new connection, when given.
        public var token: String?
        /// TLS for TCP connections, for a server started with `--tls-cert`.
        public var tls: EntitledClientTLS?

        public init(
            connections: Int = 2, requestTimeout: Duration = .seconds(10), connectTimeout: Duration = .seconds(10),
            initialBackoff: Duration = .milliseconds(50), maximumBackoff: Duration = .seconds(2), token: String? = nil,
            tls: EntitledClientTLS? = nil
        ) {
            self.connections = max(1, connections)
            self.requestTimeout = requestTimeout
            self.connectTimeout = connectTimeout
            self.initialBackoff = initialBackoff
            self.maximumBackoff = max(initialBackoff, maximumBackoff)
            self.token = token
            self.tls = tls
        }
    }

    /// One connection's state, for monitoring and tests.
    public struct ConnectionStatus: Sendable, Hashable {
        /// Whether the connection is open now.
        public var isOpen: Bool
        /// Requests sent on this slot whose answer has not come yet.
        public var inFlight: Int
        /// Requests sent on this slot since the pool was made, over all its connections.
        public var sent: Int
        /// Connections opened for this slot since the pool was made.
        public var connects: Int
        /// The node the open connection goes to; nil when it is not open.
        public var address: ServerAddress?
    }

    /// The first node: the only one of a pool made with `init(address:configuration:)`.
    public nonisolated let address: ServerAddress
    /// Every node, in the order given.
    public nonisolated let addresses: [ServerAddress]
    public nonisolated let configuration: Configuration

    private struct Slot {
        var connection: EntitledAsyncConnection?
        /// The index in `addresses` of `connection`'s node.
        var node: Int?
        var connecting: Task<Result<EntitledAsyncConnection, EntitledClientError>, Never>?
        var inFlight = 0
        var sent = 0
        var connects = 0
        /// The error of this slot's last connect, when it reached no node.
        var lastError: EntitledClientError?
    }

    /// What the pool knows of one node: a node that refused a connect is not tried again before `retryAt`.
    private struct Node {
        var failedAttempts = 0
        var retryAt: ContinuousClock.Instant?
        var lastError: EntitledClientError?
    }

    private var slots: [Slot]
    private var nodes: [Node]
    /// The node of slot 0; slot `i` prefers node `(firstNode + i) % nodes.count`.
    private let firstNode: Int
    private var isClosed = false

    /// Makes a pool to one server; nothing is opened until the first request.
    public init(address: ServerAddress = .standard, configuration: Configuration = Configuration()) {
        self.init(addresses: [address], configuration: configuration)
    }

    /// Makes a pool to the nodes of one cluster (servers that answer alike: several `entitled --postgres`
    /// on one database); nothing is opened until the first request.
    /// - Precondition: `addresses` is not empty.
    public init(addresses: [ServerAddress], configuration: Configuration = Configuration()) {
        precondition(!addresses.isEmpty, "EntitledPool needs at least one address")
        self.address = addresses[0]
        self.addresses = addresses
        self.configuration = configuration
        self.slots = Array(repeating: Slot(), count: configuration.connections)
        self.nodes = Array(repeating: Node(), count: addresses.count)
        self.firstNode = Int.random(in: 0..<addresses.count)
    }

    /// Sends one request on the least busy connection and returns its answer; an error answer
    /// (`"ok":false`) is returned, not thrown. A read whose connection is lost before its answer came is
    /// sent again on a connection to another node, when the pool has several (see the type's notes).
    /// After an `unauthorized` or `forbidden` answer the connection is closed, so the next request
    /// authenticates anew (the server's tokens may have been reloaded).
    ///
    /// - Throws: `cannotConnect` (or, with TLS, the TLS error that named the problem, such as
    ///   `untrustedCertificate`) when no connection is open and none could be opened (or may be
    ///   attempted yet), the errors of `EntitledAsyncConnection.send`, and `closed` after `close()`.
    public func send(_ request: EntitledRequest, timeout: Duration? = nil) async throws(EntitledClientError) -> EntitledResponse {
        var lostOn: Set<Int> = []
        let deadline = ContinuousClock.now + (timeout ?? configuration.requestTimeout)
        var loadingAnswers = 0
        while true {
            let (index, connection) = try await reserveConnection(avoiding: lostOn)
            let node = slots[index].node
            do {
                defer { slots[index].inFlight -= 1 }
                let answer = try await connection.send(request, timeout: timeout ?? configuration.requestTimeout)
                if let code = answer.error?.code, code == .unauthorized || code == .forbidden {
                    // The server no longer takes this connection's token as it did (tokens reloaded): the next
                    // request connects again and authenticates anew, so a restored or changed token is
                    // used at once, not after the connection happens to close.
                    await connection.close()
                }
                if answer.error?.code == .loading {
                    // The server is starting and carried nothing out; it closes this connection once it is
                    // ready. Ask again on a new connection while the request's time lasts.
                    await connection.close()
                    loadingAnswers += 1
                    let pause = backoff(afterFailures: loadingAnswers)
                    if ContinuousClock.now + pause < deadline {
                        try? await Task.sleep(for: pause)
                        continue
                    }
                }
                return answer
            } catch {
                // A server that answered `loading` closes its connections as it becomes ready: a read lost
                // that way is asked again (a write is not: the pool cannot tell that it was never made).
                if request.isRead, error.meansConnectionLost, loadingAnswers > 0, ContinuousClock.now < deadline {
                    continue
                }
                guard request.isRead, error.meansConnectionLost, let node, addresses.count > 1, lostOn.count + 1 < addresses.count else {
                    throw error
                }
                lostOn.insert(node)
            }
        }
    }

    /// Sends a request and returns its answer when the server carried it out.
    /// - Throws: `server(failure)` for an error answer, and the errors of `send`.
    public func sendExpectingSuccess(_ request: EntitledRequest, timeout: Duration? = nil) async throws(EntitledClientError)
        -> EntitledResponse
    {
        let response = try await send(request, timeout: timeout)
        if let failure = response.error { throw .server(failure) }
        return response
    }

    /// Whether the subject has access, and until when (see `EntitledAccess`). With `minSeq` (a write's
    /// `EntitledResponse.sequence`), the answer waits until the server has applied that write.
    /// - Throws: `server(failure)` for an error answer (`not_found` for an entitlement the catalog does not
    ///   define, `bad_request`, `stale` when the server had not applied `minSeq` in time, ...), and the
    ///   errors of `send`.
    public func check(
        user: String? = nil, device: String? = nil, product: String? = nil, entitlement: String? = nil, at: String? = nil,
        minSeq: UInt64? = nil, timeout: Duration? = nil
    ) async throws(EntitledClientError) -> EntitledAccess {
        let response = try await sendExpectingSuccess(
            .check(user: user, device: device, product: product, entitlement: entitlement, at: at, minSeq: minSeq), timeout: timeout
        )
        guard let active = response["active"]?.boolValue else {
            throw .malformedResponse(line: response.line, reason: "a check's answer must have a boolean \"active\"")
        }
        return active ? .active(until: response["expiresAt"]?.stringValue) : .inactive
    }

    /// Each connection's state, in slot order.
    public var connectionStatus: [ConnectionStatus] {
        slots.map { slot in
            let isOpen = slot.connection?.isOpen ?? false
            return ConnectionStatus(
                isOpen: isOpen, inFlight: slot.inFlight, sent: slot.sent, connects: slot.connects,
                address: isOpen ? slot.node.map { addresses[$0] } : nil
            )
        }
    }

    /// Closes every connection; requests in flight fail with `closed`, later ones too.
    public func close() async {
        isClosed = true
        let open = slots.compactMap(\.connection)
        for index in slots.indices {
            slots[index].connecting?.cancel()
            slots[index].connection = nil
        }
        for connection in open { await connection.close() }
    }

    /// Pushes about the user, the device or both, on a dedicated connection (see `watch(_:unwatch:)`).
    public nonisolated func watch(user: String? = nil, device: String? = nil) -> AsyncThrowingStream<EntitledPush, any Error> {
        watch(.watch(user: user, device: device), unwatch: .unwatch(user: user, device: device))
    }

    /// Pushes about every membership, on a dedicated connection.
    public nonisolated func watchAll() -> AsyncThrowingStream<EntitledPush, any Error> {
        watch(.watchAll, unwatch: .unwatchAll)
    }

    /// Opens a dedicated connection (to any node that accepts it), sends `request` (a watch) and yields the
    /// lines the server pushes.
    ///
    /// The stream fails with `server(failure)` when the watch is refused, with the connect error when no
    /// connection can be opened, and with the connection's error when it closes: the server forgot the
    /// watch then, and pushes of the changes made meanwhile are lost (watch again and ask for the current
    /// state). When the consumer stops iterating (its task is cancelled, or it drops the stream), the pool
    /// sends `unwatch` and closes the connection.
    public nonisolated func watch(_ request: EntitledRequest, unwatch: EntitledRequest) -> AsyncThrowingStream<EntitledPush, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: EntitledPush.self, throwing: (any Error).self,
            bufferingPolicy: .bufferingNewest(EntitledAsyncConnection.maximumQueuedPushes)
        )
        let addresses = self.addresses
        let configuration = self.configuration
        let task = Task {
            let connection: EntitledAsyncConnection
            do {
                // Any node will do: every node pushes every change, wherever it was written.
                let first = Int.random(in: 0..<addresses.count)
                connection = try await Self.openWatch(
                    request, onFirstOf: addresses.indices.map { addresses[(first + $0) % addresses.count] }, configuration: configuration
                )
            } catch {
                continuation.finish(throwing: error)
                return
            }
            // Ends when the connection closes, or when this task is cancelled (the consumer stopped).
            for await push in connection.pushes { continuation.yield(push) }
            if Task.isCancelled {
                // Closing alone ends the watch on the server; the unwatch says so first. A new task, since
                // this one is cancelled and its requests would be too.
                Task {
                    _ = try? await connection.send(unwatch, timeout: .seconds(1))
                    await connection.close()
                }
                continuation.finish()
            } else {
                continuation.finish(throwing: connection.closeReason ?? .connectionClosed(address: connection.address))
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    // MARK: - Choosing and opening connections

    /// The open connection with the fewest requests in flight, its slot's count already raised by one;
    /// opens the connections that are down and may be attempted. Connections to the nodes in `avoiding`
    /// (where this request's connection was lost) are taken only when there is no other.
    private func reserveConnection(avoiding: Set<Int> = []) async throws(EntitledClientError) -> (Int, EntitledAsyncConnection) {
        guard !isClosed else { throw .closed }
        let now = ContinuousClock.now
        for index in slots.indices {
            if let connection = slots[index].connection, !connection.isOpen {
                slots[index].connection = nil
                slots[index].node = nil
            }
            if slots[index].connection == nil, slots[index].connecting == nil {
                let candidates = candidateNodes(forSlot: index, now: now)
                if !candidates.isEmpty { startConnecting(slot: index, nodes: candidates) }
            }
        }
        let open = slots.indices.filter { slots[$0].connection != nil }
        let preferred = open.filter { slots[$0].node.map { !avoiding.contains($0) } ?? true }
        if let index = (preferred.isEmpty ? open : preferred).min(by: { slots[$0].inFlight < slots[$1].inFlight }),
            let connection = slots[index].connection
        {
            slots[index].inFlight += 1
            slots[index].sent += 1
            return (index, connection)
        }
        let connecting = slots.indices.filter { slots[$0].connecting != nil }
        if let index = connecting.min(by: { slots[$0].inFlight < slots[$1].inFlight }), let task = slots[index].connecting {
            slots[index].inFlight += 1
            switch await task.value {
            case .success(let connection):
                slots[index].sent += 1
                return (index, connection)
            case .failure(let error):
                slots[index].inFlight -= 1
                throw error
            }
        }
        throw slots.compactMap(\.lastError).first ?? nodes.compactMap(\.lastError).first
            ?? .cannotConnect(address: address, reason: "no connection could be opened")
    }

    /// The nodes slot `index` may try now, its own first, then the ones after it; none in backoff.
    private func candidateNodes(forSlot index: Int, now: ContinuousClock.Instant) -> [Int] {
        let own = (firstNode + index) % nodes.count
        return nodes.indices.map { (own + $0) % nodes.count }.filter { nodes[$0].retryAt.map { now >= $0 } ?? true }
    }

    /// Connects slot `index` to the first of `candidates` (indices in `addresses`) that accepts.
    private func startConnecting(slot index: Int, nodes candidates: [Int]) {
        let addresses = self.addresses
        let configuration = self.configuration
        slots[index].connecting = Task {
            var lastError = EntitledClientError.cannotConnect(address: addresses[candidates[0]], reason: "no connection could be opened")
            for node in candidates {
                do throws(EntitledClientError) {
                    let (_, connection) = try await Self.connect(toFirstOf: [addresses[node]], configuration: configuration)
                    await self.finishConnecting(slot: index, node: node, connection: connection)
                    return .success(connection)
                } catch {
                    lastError = error
                    self.nodeRefused(node, error: error)
                    guard error.isWorthTryingAnotherNode else { break }
                }
            }
            self.failedConnecting(slot: index, error: lastError)
            return .failure(lastError)
        }
    }

    /// Opens a connection to the first of `addresses` that accepts the watch `request`. A node that cannot
    /// be reached, or that is lost before it answered (one stopping closes the connections it accepted
    /// meanwhile), is passed over for the next; a node's refusal (`server(failure)`) is the answer, since
    /// every node would give it. Throws the last node's error when none accepted.
    private static func openWatch(_ request: EntitledRequest, onFirstOf addresses: [ServerAddress], configuration: Configuration)
        async throws -> EntitledAsyncConnection
    {
        var remaining = addresses[...]
        while true {
            let (address, connection) = try await connect(toFirstOf: Array(remaining), configuration: configuration)
            remaining = remaining.drop { $0 != address }.dropFirst()
            do throws(EntitledClientError) {
                let answer = try await connection.send(request, timeout: configuration.requestTimeout)
                if let failure = answer.error { throw EntitledClientError.server(failure) }
                return connection
            } catch {
                await connection.close()
                guard error.isWorthTryingAnotherNode, !remaining.isEmpty else { throw error }
            }
        }
    }

    /// Opens a connection to the first of `addresses` that accepts one; throws the last one's error.
    private static func connect(toFirstOf addresses: [ServerAddress], configuration: Configuration) async throws(EntitledClientError)
        -> (address: ServerAddress, connection: EntitledAsyncConnection)
    {
        var lastError: EntitledClientError?
        for address in addresses {
            do throws(EntitledClientError) {
                let connection = try await EntitledAsyncConnection.connect(
                    to: address, timeout: configuration.connectTimeout, token: configuration.token, tls: configuration.tls
                )
                return (address, connection)
            } catch {
                lastError = error
                guard error.isWorthTryingAnotherNode else { break }
            }
        }
        throw lastError ?? .cannotConnect(address: addresses.first ?? .standard, reason: "no address to connect to")
    }

    private func finishConnecting(slot index: Int, node: Int, connection: EntitledAsyncConnection) async {
        slots[index].connecting = nil
        if isClosed {
            await connection.close()
            return
        }
        slots[index].connection = connection
        slots[index].node = node
        slots[index].connects += 1
        slots[index].lastError = nil
        nodes[node] = Node()
    }

    private func failedConnecting(slot index: Int, error: EntitledClientError) {
        slots[index].connecting = nil
        slots[index].lastError = error
    }

    private func nodeRefused(_ node: Int, error: EntitledClientError) {
        nodes[node].failedAttempts += 1
        nodes[node].lastError = error
        nodes[node].retryAt = .now + backoff(afterFailures: nodes[node].failedAttempts)
    }

    /// `initialBackoff` after one failure, doubled for each further one, at most `maximumBackoff`.
    private func backoff(afterFailures failures: Int) -> Duration {
        let doubled = configuration.initialBackoff * (1 << min(max(failures - 1, 0), 20))
        return min(doubled, configuration.maximumBackoff)
    }
}

extension EntitledClientError {
    /// The connection a request was sent on is gone, and the request's answer with it: the request may or
    /// may not have been carried out.
    var meansConnectionLost: Bool {
        switch self {
        case .connectionClosed, .connectionFailed, .timedOut: true
        default: false
        }
    }

    /// A connect that failed for this reason may succeed on another node: that node is down or unreachable.
    /// A refused token or an untrusted certificate would be refused by every node alike.
    var isWorthTryingAnotherNode: Bool {
        switch self {
        case .cannotConnect, .connectionClosed, .connectionFailed, .timedOut, .tlsHandshakeFailed: true
        default: false
        }
    }
}

/// The answer of a `check`.
public enum EntitledAccess: Sendable, Hashable {
    /// Access now (or at the `at` asked about), until the RFC 3339 time given, or for good when `nil`.
    case active(until: String?)
    case inactive

    public var isActive: Bool {
        if case .active = self { return true }
        return false
    }
}
