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

/// The user outbound event `close()` sends: fail the requests in flight with `closed`, close the channel.
struct CloseByClient: Sendable {}

/// The decoder's error for a line longer than the limit.
struct ResponseLineTooLong: Error {}

// MARK: - Framing
