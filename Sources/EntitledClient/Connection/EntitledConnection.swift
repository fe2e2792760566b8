import Dispatch
import NIOConcurrencyHelpers
import NIOCore

/// A synchronous connection to an `entitled` server: one request, then its response.
///
/// After a `watch` the server also pushes lines of its own (`{"push":"access",...}`) at any time, between
/// answers too. They are never taken for an answer: they are queued as they arrive, and `nextPush` hands
/// them out in the order they came, waiting for more when none is queued. Watches belong to the server's
/// connection: when this one reconnects they are gone (`takeLostWatches()` says how many), and the caller
/// watches again.
///
/// It connects on first use and reconnects by itself when it finds, before sending, that the server has
/// closed the connection (a restart between two requests). A request that was sent and then lost is never
/// sent again: a retried `grant` would create a second membership, so the caller gets the error instead and
/// decides. Not thread-safe; one thread uses it.
///
/// A server that is starting answers every request `loading` (nothing was carried out) and closes its
/// connections once it is ready. Such a request is asked again on a new connection, after a pause of
/// 50 ms doubling up to 2 s, for up to `loadingWait` seconds; then the `loading` answer is returned. A
/// read (`EntitledRequest.isRead`) whose connection closes after a `loading` answer (the server became
/// ready) is sent again too; a write is not, as above.
///
/// ## A facade over the async client
///
/// There is one protocol client in this library, `EntitledAsyncConnection` (SwiftNIO): this class is a
/// thin blocking facade over it. Each call starts the work on the connection's event loop (`open`,
/// `startSending`, ...) and then blocks the caller's thread on the resulting `EventLoopFuture` (NIO's
/// `wait()`, a condition variable) or, for `nextPush`, on a semaphore the event loop signals when a push
/// arrives. The event loop completes the futures on its own thread, so the wait never needs another
/// thread of the caller's to make progress.
///
/// **Call it from plain threads only** (a command-line tool's main thread, a thread of your own), never
/// from Swift concurrency (an `async` function, a `Task`, an actor): each call blocks the thread for up
/// to `timeout` seconds (`nextPush` up to a day), and a blocked thread of the cooperative pool starves
/// every other task. Asynchronous code uses `EntitledAsyncConnection` or `EntitledPool` directly. It must
/// not be called on a SwiftNIO event loop either (NIO traps a `wait()` there).
public final class EntitledConnection {
    /// The largest response line accepted: a listing of a very large account stays far below it.
    public static let maximumResponseLength = 64 << 20

    public let address: ServerAddress
    /// Seconds to wait for a connection, and for each response.
    public let timeout: Double
    /// Seconds to keep asking a starting server (one that answers `loading`) before its answer is returned;
    /// 0 returns it at once.
    public let loadingWait: Double
    private let token: String?
    private let tls: EntitledClientTLS?
    /// The open connection, or the one that closed and was not replaced yet; `nil` before the first use,
    /// after `close()` and after a failed request.
    private var connection: EntitledAsyncConnection?
    /// Pushed lines received but not yet handed out, oldest first; filled on the event loop.
    private let inbox = PushInbox()

    /// The most pushed lines kept while nobody reads them; beyond it the oldest are dropped (and counted
    /// in `droppedPushes`), so a caller that watches and never reads cannot grow memory without bound.
    public static let maximumQueuedPushes = 10_000

    /// How many pushed lines were dropped because the queue was full.
    public var droppedPushes: Int { inbox.dropped }

    /// Calls `handler` each time a pushed line is queued, on the connection's event loop thread, so a
    /// thread busy with something else (a console waiting for a key) can be woken to take it; `nil`
    /// stops the calls. The handler must be quick and must not call this connection: it should only
    /// signal (write a byte to a pipe, say) and let the owning thread call `takeAvailablePushes()`.
    public func setPushArrivalHandler(_ handler: (@Sendable () -> Void)?) {
        inbox.setArrivalHandler(handler)
    }

    /// The watches the server reported for the open connection (the `watches` of the last `watch` or
    /// `unwatch` answer); 0 after a new connection is opened.
    public private(set) var watchCount = 0

    /// The watches lost when a connection that held some was replaced by a new one (the server forgets
    /// a connection's watches when it closes), not yet taken by `takeLostWatches()`.
    private var lostWatches = 0

    /// Set when a token was given but the server requires no authentication: it answered `auth` with
    /// `"authRequired":false` (started without `--auth`) or, predating authentication, `unknown_op`. The
    /// token was not needed.
    public private(set) var serverIgnoresAuthentication = false

    /// The longest timeout accepted: a day. Longer (or infinite) values are clamped to it.
    public static let maximumTimeout: Double = 86_400

    /// Prepares a connection; nothing is opened until `connect()` or the first request.
    /// - Parameters:
    ///   - timeout: seconds, clamped to 0.001...`maximumTimeout`.
    ///   - token: sent in an `auth` request right after each connect, when given.
    ///   - tls: TLS for a TCP address, for a server started with `--tls-cert`.
    ///   - loadingWait: seconds to keep asking a starting server again, clamped to 0...`maximumTimeout`.
    public init(
        address: ServerAddress = .standard, timeout: Double = 10, token: String? = nil, tls: EntitledClientTLS? = nil,
        loadingWait: Double = 60
    ) {
        self.address = address
        self.timeout = timeout.isNaN ? 10 : min(max(timeout, 0.001), Self.maximumTimeout)
        self.loadingWait = loadingWait.isNaN ? 0 : min(max(loadingWait, 0), Self.maximumTimeout)
        self.token = token
        self.tls = tls
    }

    /// Whether a connection is open and the server has not closed it.
    public var isConnected: Bool {
        guard let connection else { return false }
        settle(connection)
        return connection.isOpen
    }

    /// Opens the connection now (authenticating when a token was given), replacing any open one. Throws
    /// as `EntitledAsyncConnection.connect` does: a TLS problem is named (`untrustedCertificate`, ...).
    public func connect() throws(EntitledClientError) {
        drop()
        lostWatches += watchCount
        watchCount = 0
        // The pushes go to this facade's inbox; the connection's own stream is left empty.
        let (unused, continuation) = AsyncStream.makeStream(of: EntitledPush.self)
        continuation.finish()
        let opening = EntitledAsyncConnection.open(
            to: address, timeout: Self.duration(seconds: timeout), pushes: unused, sink: inbox.sinkForNewConnection(), tls: tls
        )
        let opened: EntitledAsyncConnection
        do {
            opened = try opening.wait()
        } catch let error as EntitledClientError {
            throw error  // a failed TLS handshake, already explained
        } catch {
            throw .cannotConnect(address: address, reason: EntitledAsyncConnection.connectFailureReason(error))
        }
        connection = opened
        guard let token else { return }
        let response = try exchange(line: EntitledRequest.auth(token: token).jsonLine, expectedID: nil, on: opened)
        if response.isOK, response["authRequired"]?.boolValue == false {
            serverIgnoresAuthentication = true
        }
        if let failure = response.error {
            if failure.code == .unknownOp {
                serverIgnoresAuthentication = true
                return
            }
            drop()
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
        drop()
        watchCount = 0
    }

    /// Sends one request and returns its response, connecting first when needed. When the request has
    /// an `id`, the answer must carry the same one (else the stream is out of step: `malformedResponse`).
    public func send(_ request: EntitledRequest) throws(EntitledClientError) -> EntitledResponse {
        try sendWaitingOutLoading(
            line: request.jsonLine, expectedID: request.fields.last(where: { $0.key == "id" })?.value, isRead: request.isRead
        )
    }

    /// Sends one protocol line exactly as given (it must not contain a newline) and returns the response.
    /// A `loading` answer is asked again as for `send(_:)`; a line lost with its connection is not sent
    /// again, whatever it asks, since this method does not read it.
    public func send(line: String) throws(EntitledClientError) -> EntitledResponse {
        try sendWaitingOutLoading(line: line, expectedID: nil, isRead: false)
    }

    /// `send(line:expectedID:)`, asked again while the server answers `loading` and `loadingWait` lasts.
    private func sendWaitingOutLoading(line: String, expectedID: JSONValue?, isRead: Bool) throws(EntitledClientError) -> EntitledResponse {
        let deadline = DispatchTime.now() + Self.interval(seconds: loadingWait)
        var loadingAnswers = 0
        while true {
            let response: EntitledResponse
            do {
                response = try send(line: line, expectedID: expectedID)
            } catch {
                // The server closes its connections as it becomes ready: a read lost that way is asked again.
                if isRead, error.meansConnectionLost, loadingAnswers > 0, DispatchTime.now() < deadline { continue }
                throw error
            }
            guard response.error?.code == .loading else { return response }
            loadingAnswers += 1
            let pause = Self.loadingPause(afterAnswers: loadingAnswers)
            guard DispatchTime.now() + Self.interval(seconds: pause) < deadline else { return response }
            drop()
            // Dispatch rather than Foundation for the pause: this library does not link Foundation.
            _ = DispatchSemaphore(value: 0).wait(timeout: .now() + Self.interval(seconds: pause))
        }
    }

    /// The pause before asking a starting server again: 50 ms, doubling up to 2 s.
    static func loadingPause(afterAnswers answers: Int) -> Double {
        min(0.05 * Double(1 << min(max(answers - 1, 0), 6)), 2)
    }

    private func send(line: String, expectedID: JSONValue?) throws(EntitledClientError) -> EntitledResponse {
        // Refused before the exchange, whose failure would drop a connection that is in step.
        if line.utf8.contains(UInt8(ascii: "\n")) { throw .lineContainsNewline }
        // `isConnected` lets the event loop handle what has arrived first: pushes already waiting are
        // queued before the answer, and a server that closed after the last request is noticed here (and
        // reconnected to) rather than after sending.
        if !isConnected { try connect() }
        guard let connection else { throw .connectionClosed(address: address) }
        let response = try exchange(line: line, expectedID: expectedID, on: connection)
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
        if let push = inbox.take(waitingIfEmpty: false) { return push }
        guard let connection else { throw .connectionClosed(address: address) }
        let seconds = timeout.map { $0.isNaN ? 0 : min(max($0, 0), Self.maximumTimeout) } ?? self.timeout
        let deadline = DispatchTime.now() + DispatchTimeInterval.nanoseconds(Int((seconds * 1e9).rounded()))
        // Lines that have arrived are handled first, so a look without waiting sees them.
        settle(connection)
        while true {
            if let push = inbox.take(waitingIfEmpty: true) { return push }
            if let reason = connection.closeReason {
                inbox.stopWaiting()
                self.connection = nil
                throw reason == .closed ? .connectionClosed(address: address) : reason
            }
            if !inbox.waitForArrival(until: deadline) {
                inbox.stopWaiting()
                if let push = inbox.take(waitingIfEmpty: false) { return push }
                return nil
            }
        }
    }

    /// Takes every pushed line already received, and those the server has sent that are waiting to be
    /// read, without waiting for more. Never throws: a closed connection shows at the next request.
    public func takeAvailablePushes() -> [EntitledPush] {
        if let connection {
            settle(connection)
            if !connection.isOpen { self.connection = nil }
        }
        return inbox.takeAll()
    }

    /// One request on `connection`, waited for on this thread.
    private func exchange(
        line: String, expectedID: JSONValue?, on connection: EntitledAsyncConnection
    ) throws(EntitledClientError) -> EntitledResponse {
        let answer = connection.startSending(line: line, expectedID: expectedID, timeout: Self.duration(seconds: timeout))
        do {
            return try answer.futureResult.wait()
        } catch {
            // After a failed exchange the stream's position is unknown: a late answer would be taken for
            // the next request's. The async core has closed the connection; the next request opens one.
            drop()
            switch error {
            case EntitledClientError.timedOut: throw .timedOut(address: address, seconds: timeout)
            case let error as EntitledClientError: throw error
            default: throw .connectionFailed(address: address, reason: String(describing: error))
            }
        }
    }

    /// Waits until the event loop has handled what arrived on the connection so far (see `settled()`).
    private func settle(_ connection: EntitledAsyncConnection) {
        _ = try? connection.settled().wait()
    }

    /// Closes the connection, if any, and forgets it.
    private func drop() {
        guard let connection else { return }
        self.connection = nil
        _ = try? connection.startClosing().wait()
    }

    private static func interval(seconds: Double) -> DispatchTimeInterval {
        .nanoseconds(Int((seconds * 1e9).rounded()))
    }

    private static func duration(seconds: Double) -> Duration {
        .nanoseconds(Int64((seconds * 1e9).rounded()))
    }
}

/// The pushed lines an `EntitledConnection` received and has not handed out yet, oldest first. The event
/// loop delivers to it (through the `PushSink` of the current connection); the facade's thread takes
/// from it, and waits on a semaphore the delivery signals while the thread waits.
final class PushInbox: Sendable {
    private struct State {
        var queue = CircularBuffer<EntitledPush>()
        var dropped = 0
        /// Bumped for each new connection: a connection that was replaced delivers nothing more.
        var generation: UInt64 = 0
        /// Whether the facade's thread waits (or is about to) for a delivery to signal `arrivals`.
        var waiting = false
    }

    private let state = NIOLockedValueBox(State())
    private let arrivals = DispatchSemaphore(value: 0)
    private let arrivalHandler = NIOLockedValueBox<(@Sendable () -> Void)?>(nil)

    func setArrivalHandler(_ handler: (@Sendable () -> Void)?) {
        arrivalHandler.withLockedValue { $0 = handler }
    }

    var dropped: Int { state.withLockedValue { $0.dropped } }

    /// A sink for a new connection; deliveries of the connections before it are ignored from now on.
    func sinkForNewConnection() -> PushSink {
        let generation = state.withLockedValue { state in
            state.generation += 1
            return state.generation
        }
        return PushSink(
            deliver: { push in
                let wake = self.state.withLockedValue { state -> Bool? in
                    guard state.generation == generation else { return nil }
                    if state.queue.count >= EntitledConnection.maximumQueuedPushes {
                        state.queue.removeFirst()
                        state.dropped += 1
                    }
                    state.queue.append(push)
                    return self.stopsWaiting(&state)
                }
                guard let wake else { return }
                if wake { self.arrivals.signal() }
                self.arrivalHandler.withLockedValue { $0 }?()
            },
            finish: {
                let wake = self.state.withLockedValue { state in
                    state.generation == generation && self.stopsWaiting(&state)
                }
                if wake { self.arrivals.signal() }
            }
        )
    }

    private func stopsWaiting(_ state: inout State) -> Bool {
        defer { state.waiting = false }
        return state.waiting
    }

    /// The oldest push; when there is none and `waitingIfEmpty`, the next delivery (or the connection's
    /// end) signals `waitForArrival`.
    func take(waitingIfEmpty: Bool) -> EntitledPush? {
        state.withLockedValue { state in
            if let push = state.queue.popFirst() { return push }
            if waitingIfEmpty { state.waiting = true }
            return nil
        }
    }

    func takeAll() -> [EntitledPush] {
        state.withLockedValue { state in
            defer { state.queue.removeAll() }
            return Array(state.queue)
        }
    }

    /// Waits for a delivery or a connection's end after `take(waitingIfEmpty: true)`; false on the
    /// deadline.
    func waitForArrival(until deadline: DispatchTime) -> Bool {
        arrivals.wait(timeout: deadline) == .success
    }

    /// Ends a wait that timed out; a signal that came meanwhile wakes the next wait once, which looks again.
    func stopWaiting() {
        state.withLockedValue { $0.waiting = false }
    }
}
