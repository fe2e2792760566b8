/// A synchronous connection to an `entitled` server: one request, then its response.
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

    /// Closes the connection; the next request opens a new one.
    public func close() {
        socket = nil
    }

    /// Sends one request and returns its response, connecting first when needed.
    public func send(_ request: EntitledRequest) throws(EntitledClientError) -> EntitledResponse {
        try send(line: request.jsonLine)
    }

    /// Sends one protocol line exactly as given (it must not contain a newline) and returns the response.
    public func send(line: String) throws(EntitledClientError) -> EntitledResponse {
        if !isConnected { try connect() }
        guard let socket else { throw .connectionClosed(address: address) }
        return try exchange(line: line, on: socket)
    }

    private func exchange(line: String, on socket: LineSocket) throws(EntitledClientError) -> EntitledResponse {
        let deadline = Deadline(seconds: timeout)
        do {
            try socket.send(line: line, deadline: deadline)
            let answer = try socket.readLine(deadline: deadline, maximumLength: Self.maximumResponseLength)
            return try EntitledResponse(line: answer)
        } catch {
            // After a failed exchange the stream's position is unknown: a late answer would be taken for
            // the next request's. Start the next request on a fresh connection.
            self.socket = nil
            throw error
        }
    }
}
