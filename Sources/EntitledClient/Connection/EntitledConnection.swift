/// A synchronous connection to an `entitled` server: one request, then its response.
///
/// After a `watch` the server also pushes lines of its own (`{"push":"access",...}`) at any time, between
/// answers too. They are never taken for an answer: `send` queues the pushes it reads while it waits,
/// and `nextPush` hands them out in the order they came, reading more from the server when none is
/// queued. Watches belong to the server's connection: when this one reconnects they are gone
/// (`takeLostWatches()` says how many), and the caller watches again.
///
/// It connects on first use and reconnects by itself when it finds, before sending, that the server has
/// closed the connection (a restart between two requests). A request that was sent and then lost is never
/// sent again: a retried `grant` would create a second membership, so the caller gets the error instead and
/// decides. Not thread-safe; one thread uses it.
public final class EntitledConnection {
    /// The largest response line accepted: a listing of a very large account stays far below it.
    public static let maximumResponseLength = 64 << 20

    public let address: ServerAddress
    /// Seconds to wait for a connection, and for each response.
    public let timeout: Double
    private let token: String?
    private var socket: LineSocket?
    /// Pushed lines read but not yet handed out, oldest first.
    private var queuedPushes: [EntitledPush] = []

    /// The most pushed lines kept while nobody reads them; beyond it the oldest are dropped (and counted
    /// in `droppedPushes`), so a caller that watches and never reads cannot grow memory without bound.
    public static let maximumQueuedPushes = 10_000

    /// How many pushed lines were dropped because the queue was full.
    public private(set) var droppedPushes = 0

    /// The watches the server reported for the open connection (the `watches` of the last `watch` or
    /// `unwatch` answer); 0 after a new connection is opened.
    public private(set) var watchCount = 0

    /// The watches lost when a connection that held some was replaced by a new one (the server forgets
    /// a connection's watches when it closes), not yet taken by `takeLostWatches()`.
    private var lostWatches = 0

    /// Set when a token was given but the server does not know the `auth` operation (it predates
    /// authentication, so it admits every client): the token was not needed.
    public private(set) var serverIgnoresAuthentication = false

    /// The longest timeout accepted: a day. Longer (or infinite) values are clamped to it.
    public static let maximumTimeout: Double = 86_400

    /// Prepares a connection; nothing is opened until `connect()` or the first request.
    /// - Parameters:
    ///   - timeout: seconds, clamped to 0.001...`maximumTimeout`.
    ///   - token: sent in an `auth` request right after each connect, when given.
    public init(address: ServerAddress = .standard, timeout: Double = 10, token: String? = nil) {
        self.address = address
        self.timeout = timeout.isNaN ? 10 : min(max(timeout, 0.001), Self.maximumTimeout)
        self.token = token
    }

    /// Whether a connection is open and the server has not closed it.
    public var isConnected: Bool {
        guard let socket else { return false }
        return !socket.peerHasClosed
    }

    /// Opens the connection now (authenticating when a token was given), replacing any open one.
    public func connect() throws(EntitledClientError) {
        socket = nil
        lostWatches += watchCount
        watchCount = 0
        let opened = try LineSocket.connect(to: address, timeout: timeout)
        socket = opened
        guard let token else { return }
        let response = try exchange(line: EntitledRequest.auth(token: token).jsonLine, on: opened)
        if let failure = response.error {
            if failure.code == "unknown_op" {
                serverIgnoresAuthentication = true
                return
            }
            socket = nil
            throw .authenticationFailed(address: address, failure: failure)
        }
    }

    /// How many watches were lost since the last call, because the connection holding them closed and a
    /// new one was opened (after a server restart, say): watch again to get their pushes.
    public func takeLostWatches() -> Int {
        defer { lostWatches = 0 }
        return lostWatches
    }

    /// Closes the connection; the next request opens a new one.
    public func close() {
        socket = nil
        watchCount = 0
    }

    /// Sends one request and returns its response, connecting first when needed.
    public func send(_ request: EntitledRequest) throws(EntitledClientError) -> EntitledResponse {
        try send(line: request.jsonLine)
    }

    /// Sends one protocol line exactly as given (it must not contain a newline) and returns the response.
    public func send(line: String) throws(EntitledClientError) -> EntitledResponse {
        // While watching, pushes already waiting are read first, so they keep their order before the
        // answer, and a server that closed after pushing is noticed here (and reconnected to) rather than
        // after sending. Without a watch no push comes, and a request costs no extra read.
        if watchCount > 0 { readAvailablePushes() }
        if !isConnected { try connect() }
        guard let socket else { throw .connectionClosed(address: address) }
        let response = try exchange(line: line, on: socket)
        if response.isOK, let count = response["watches"]?.intValue { watchCount = count }
        return response
    }

    /// The next pushed line: a queued one, else the next the server sends within `timeout` seconds
    /// (default: the connection's timeout; 0 looks without waiting). `nil` when none came in time.
    ///
    /// - Throws: `connectionClosed` when the server closed the connection (its watches went with it),
    ///   and the errors of a failed read. Without an open connection there is nothing to wait for, and
    ///   `connectionClosed` is thrown at once.
    public func nextPush(timeout: Double? = nil) throws(EntitledClientError) -> EntitledPush? {
        if !queuedPushes.isEmpty { return queuedPushes.removeFirst() }
        guard let socket else { throw .connectionClosed(address: address) }
        let seconds = timeout.map { $0.isNaN ? 0 : min(max($0, 0), Self.maximumTimeout) } ?? self.timeout
        let deadline = Deadline(seconds: seconds)
        while queuedPushes.isEmpty {
            let line: String
            do {
                line = try socket.readLine(deadline: deadline, maximumLength: Self.maximumResponseLength)
            } catch {
                if case .timedOut = error { return nil }
                self.socket = nil
                throw error
            }
            guard let push = EntitledPush(pushedLine: line) else {
                // An answer with no request waiting for it: the stream is out of step.
                self.socket = nil
                throw .malformedResponse(line: line, reason: "the server answered a request that was not sent")
            }
            enqueue(push)
        }
        return queuedPushes.removeFirst()
    }

    /// Takes every pushed line already read, and those the server has sent that are waiting to be read,
    /// without waiting for more. Never throws: a closed connection shows at the next request.
    public func takeAvailablePushes() -> [EntitledPush] {
        readAvailablePushes()
        defer { queuedPushes.removeAll() }
        return queuedPushes
    }

    /// Reads the pushed lines that have arrived, without waiting; a server that has closed the connection
    /// leaves it closed (the next request reconnects).
    private func readAvailablePushes() {
        guard let socket else { return }
        while true {
            do {
                let line = try socket.readLine(deadline: Deadline(seconds: 0), maximumLength: Self.maximumResponseLength)
                guard let push = EntitledPush(pushedLine: line) else {
                    self.socket = nil
                    return
                }
                enqueue(push)
            } catch {
                if case .timedOut = error { return }
                self.socket = nil
                return
            }
        }
    }

    private func enqueue(_ push: EntitledPush) {
        if queuedPushes.count >= Self.maximumQueuedPushes {
            queuedPushes.removeFirst()
            droppedPushes += 1
        }
        queuedPushes.append(push)
    }

    private func exchange(line: String, on socket: LineSocket) throws(EntitledClientError) -> EntitledResponse {
        let deadline = Deadline(seconds: timeout)
        do {
            try socket.send(line: line, deadline: deadline)
            while true {
                let answer = try socket.readLine(deadline: deadline, maximumLength: Self.maximumResponseLength)
                // A pushed line can come before the answer: keep it for `nextPush`, wait on.
                if let push = EntitledPush(pushedLine: answer) {
                    enqueue(push)
                    continue
                }
                return try EntitledResponse(line: answer)
            }
        } catch {
            // After a failed exchange the stream's position is unknown: a late answer would be taken for
            // the next request's. Start the next request on a fresh connection.
            self.socket = nil
            throw error
        }
    }
}
