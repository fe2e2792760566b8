/// A small pool of `EntitledAsyncConnection`s to one server, for an application's many tasks.
///
/// `send` takes the open connection with the fewest requests in flight; the requests of one connection are
/// pipelined. A connection that is down is opened again lazily, by the next request, and after a failed
/// attempt only once a backoff has passed (`initialBackoff`, doubling up to `maximumBackoff`); a request
/// that finds no open connection and none that may be attempted yet fails at once with the last connect
/// error, rather than waiting. Requests are never retried (a `grant` sent twice creates two memberships):
/// a request lost with its connection fails with the connection's error, and the caller decides.
///
/// Watches belong to a connection, so `watch` opens a dedicated one; a `watch` sent through `send`
/// would bind its pushes to a pooled connection nobody reads from.
public actor EntitledPool {
    public struct Configuration: Sendable, Hashable {
        /// How many connections the pool keeps (at least 1).
        public var connections: Int
        /// The timeout of a request when `send` is given none.
        public var requestTimeout: Duration
        /// How long a connect may take.
        public var connectTimeout: Duration
        /// The wait after a first failed connect; it doubles with each further failure...
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
    }

    public nonisolated let address: ServerAddress
    public nonisolated let configuration: Configuration

    private struct Slot {
        var connection: EntitledAsyncConnection?
        var connecting: Task<Result<EntitledAsyncConnection, EntitledClientError>, Never>?
        var inFlight = 0
        var sent = 0
        var connects = 0
        var failedAttempts = 0
        var retryAt: ContinuousClock.Instant?
        var lastError: EntitledClientError?
    }

    private var slots: [Slot]
    private var isClosed = false

    /// Makes a pool; nothing is opened until the first request.
    public init(address: ServerAddress = .standard, configuration: Configuration = Configuration()) {
        self.address = address
        self.configuration = configuration
        self.slots = Array(repeating: Slot(), count: configuration.connections)
    }

    /// Sends one request on the least busy connection and returns its answer; an error answer
    /// (`"ok":false`) is returned, not thrown.
    ///
    /// - Throws: `cannotConnect` (or, with TLS, the TLS error that named the problem, such as
    ///   `untrustedCertificate`) when no connection is open and none could be opened (or may be
    ///   attempted yet), the errors of `EntitledAsyncConnection.send`, and `closed` after `close()`.
    public func send(_ request: EntitledRequest, timeout: Duration? = nil) async throws(EntitledClientError) -> EntitledResponse {
        let (index, connection) = try await reserveConnection()
        defer { slots[index].inFlight -= 1 }
        return try await connection.send(request, timeout: timeout ?? configuration.requestTimeout)
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
            ConnectionStatus(
                isOpen: slot.connection?.isOpen ?? false, inFlight: slot.inFlight, sent: slot.sent, connects: slot.connects
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

    /// Opens a dedicated connection, sends `request` (a watch) and yields the lines the server pushes.
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
        let address = self.address
        let configuration = self.configuration
        let task = Task {
            let connection: EntitledAsyncConnection
            do {
                connection = try await EntitledAsyncConnection.connect(
                    to: address, timeout: configuration.connectTimeout, token: configuration.token, tls: configuration.tls
                )
            } catch {
                continuation.finish(throwing: error)
                return
            }
            do {
                let answer = try await connection.send(request, timeout: configuration.requestTimeout)
                if let failure = answer.error { throw EntitledClientError.server(failure) }
            } catch {
                await connection.close()
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
                continuation.finish(throwing: connection.closeReason ?? .connectionClosed(address: address))
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    // MARK: - Choosing and opening connections

    /// The open connection with the fewest requests in flight, its slot's count already raised by one;
    /// opens the connections that are down and may be attempted.
    private func reserveConnection() async throws(EntitledClientError) -> (Int, EntitledAsyncConnection) {
        guard !isClosed else { throw .closed }
        let now = ContinuousClock.now
        for index in slots.indices {
            if let connection = slots[index].connection, !connection.isOpen { slots[index].connection = nil }
            if slots[index].connection == nil, slots[index].connecting == nil, slots[index].retryAt.map({ now >= $0 }) ?? true {
                startConnecting(slot: index)
            }
        }
        let open = slots.indices.filter { slots[$0].connection != nil }
        if let index = open.min(by: { slots[$0].inFlight < slots[$1].inFlight }), let connection = slots[index].connection {
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
        throw slots.compactMap(\.lastError).first ?? .cannotConnect(address: address, reason: "no connection could be opened")
    }

    private func startConnecting(slot index: Int) {
        let address = self.address
        let configuration = self.configuration
        slots[index].connecting = Task {
            let result: Result<EntitledAsyncConnection, EntitledClientError>
            do throws(EntitledClientError) {
                result = .success(
                    try await EntitledAsyncConnection.connect(
                        to: address, timeout: configuration.connectTimeout, token: configuration.token, tls: configuration.tls
                    )
                )
            } catch {
                result = .failure(error)
            }
            await self.finishConnecting(slot: index, result: result)
            return result
        }
    }

    private func finishConnecting(slot index: Int, result: Result<EntitledAsyncConnection, EntitledClientError>) async {
        slots[index].connecting = nil
        switch result {
        case .success(let connection):
            if isClosed {
                await connection.close()
                return
            }
            slots[index].connection = connection
            slots[index].connects += 1
            slots[index].failedAttempts = 0
            slots[index].retryAt = nil
            slots[index].lastError = nil
        case .failure(let error):
            slots[index].failedAttempts += 1
            slots[index].lastError = error
            slots[index].retryAt = .now + backoff(afterFailures: slots[index].failedAttempts)
        }
    }

    /// `initialBackoff` after one failure, doubled for each further one, at most `maximumBackoff`.
    private func backoff(afterFailures failures: Int) -> Duration {
        let doubled = configuration.initialBackoff * (1 << min(max(failures - 1, 0), 20))
        return min(doubled, configuration.maximumBackoff)
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
