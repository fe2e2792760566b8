import EntitledClient

/// Where a deliverer reads the change feed: pages after a change number, and the catalog (for filters by
/// entitlement). A protocol so that the engine's tests can stand a scripted feed in.
public protocol WebhookFeed: Sendable {
    /// A page of the feed after `after`, waiting up to `wait` milliseconds for a change.
    func page(after: UInt64, limit: Int, wait: Int) async throws(EntitledClientError) -> FeedPageInfo
    /// Each entitlement's products.
    func catalog() async throws(EntitledClientError) -> [String: Set<String>]
    /// Where a new endpoint starts: the feed's newest change, or just before the oldest it holds.
    func initialCursor(_ start: WebhookStart) async throws(EntitledClientError) -> UInt64
}

/// The change feed of an `entitled` server, over one connection of its own (a waiting read holds up the
/// requests behind it on its connection), opened again after it is lost.
public actor ServerWebhookFeed: WebhookFeed {
    private let address: ServerAddress
    private let token: String?
    private let tls: EntitledClientTLS?
    private var connection: EntitledAsyncConnection?

    public init(address: ServerAddress, token: String?, tls: EntitledClientTLS? = nil) {
        self.address = address
        self.token = token
        self.tls = tls
    }

    public func page(after: UInt64, limit: Int, wait: Int) async throws(EntitledClientError) -> FeedPageInfo {
        // The client's time must outlast the server's wait.
        let response = try await send(.changes(afterSeq: after, limit: limit, wait: wait), timeout: .milliseconds(wait) + .seconds(15))
        guard let page = response.feedPage else {
            throw .malformedResponse(line: response.line, reason: "a changes answer needs changes, next, newest and oldestAfterSeq")
        }
        return page
    }

    public func initialCursor(_ start: WebhookStart) async throws(EntitledClientError) -> UInt64 {
        // From 0 unless the feed no longer reaches back that far: its `truncated` answer says how far it does.
        var after: UInt64 = 0
        let first = try await send(.changes(afterSeq: 0, limit: 1), timeout: .seconds(15), refusing: false)
        if let failure = first.error {
            guard failure.code == .truncated, let oldest = first["error"]?["oldestAfterSeq"]?.intValue else { throw .server(failure) }
            after = UInt64(oldest)
        }
        guard start == .newest else { return after }
        return try await page(after: after, limit: 1, wait: 0).newest
    }

    public func catalog() async throws(EntitledClientError) -> [String: Set<String>] {
        let response = try await send(.catalog, timeout: .seconds(15))
        return Dictionary(uniqueKeysWithValues: (response.catalog ?? []).map { ($0.entitlement, Set($0.products)) })
    }

    /// Sends on the connection (opening it first), and drops it when it is lost or the server is loading,
    /// so that the next call connects again.
    /// - Parameter refusing: throw an error answer (`server`) rather than return it.
    private func send(_ request: EntitledRequest, timeout: Duration, refusing: Bool = true) async throws(EntitledClientError) -> EntitledResponse {
        let open: EntitledAsyncConnection
        if let connection, connection.isOpen {
            open = connection
        } else {
            open = try await EntitledAsyncConnection.connect(to: address, timeout: .seconds(10), token: token, tls: tls)
            connection = open
        }
        let response: EntitledResponse
        do throws(EntitledClientError) {
            response = try await open.send(request, timeout: timeout)
        } catch {
            // Lost, timed out (its answer may still come, out of turn) or refused: a new connection next time.
            await drop(open)
            throw error
        }
        if let failure = response.error {
            // A starting server closes its connections once it is ready: connect again next time.
            if failure.code == .loading { await drop(open) }
            if refusing { throw .server(failure) }
        }
        return response
    }

    private func drop(_ open: EntitledAsyncConnection) async {
        if connection === open { connection = nil }
        await open.close()
    }
}
