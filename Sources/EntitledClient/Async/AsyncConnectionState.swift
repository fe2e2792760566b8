import NIOConcurrencyHelpers
import NIOCore

/// What the connection and its handler both read: whether (and why) it closed, how many requests wait.
final class AsyncConnectionState: Sendable {
    private struct Values {
        var closeReason: EntitledClientError?
        var inFlight = 0
    }

    private let values = NIOLockedValueBox(Values())

    var closeReason: EntitledClientError? { values.withLockedValue { $0.closeReason } }
    var inFlight: Int { values.withLockedValue { $0.inFlight } }

    func markClosed(_ reason: EntitledClientError) {
        values.withLockedValue { if $0.closeReason == nil { $0.closeReason = reason } }
    }

    func adjustInFlight(by change: Int) {
        values.withLockedValue { $0.inFlight += change }
    }
}

/// A request on its way through the pipeline, with the promise its answer completes.
struct PipelinedRequest: Sendable {
    let line: String
    let expectedID: JSONValue?
    let timeout: Duration
    let promise: EventLoopPromise<EntitledResponse>
}

/// Where a connection's pushed lines go, called on the channel's event loop: `deliver` for each pushed
/// line in the order it came (before any answer read after it completes its request), `finish` once
/// when the connection has closed (after its close reason is set).
///
/// `EntitledAsyncConnection.connect` feeds its `pushes` stream; the synchronous `EntitledConnection`
/// gives a sink of its own, so a push read before an answer is queued by the time the answer returns.
struct PushSink: Sendable {
    let deliver: @Sendable (EntitledPush) -> Void
    let finish: @Sendable () -> Void

    init(deliver: @escaping @Sendable (EntitledPush) -> Void, finish: @escaping @Sendable () -> Void) {
        self.deliver = deliver
        self.finish = finish
    }

    init(_ continuation: AsyncStream<EntitledPush>.Continuation) {
        self.init(deliver: { continuation.yield($0) }, finish: { continuation.finish() })
    }
}

/// The user outbound event `close()` sends: fail the requests in flight with `closed`, close the channel.
struct CloseByClient: Sendable {}

/// The decoder's error for a line longer than the limit.
struct ResponseLineTooLong: Error {}

// MARK: - Framing
