import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1 channel with the request deadline in each connection's pipeline: a
/// `RequestArrivalHandler` ahead of the HTTP decoder, and a `RequestDeadlineHandler` between the HTTP codec and
/// Hummingbird's own connection handler (where the configuration's additional handlers go).
struct DeadlineHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            // Added first, so it stays first: HTTP1Channel appends the decoder and the rest after it.
            try channel.pipeline.syncOperations.addHandler(RequestArrivalHandler())
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return http1.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// An HTTP/1 server whose requests must each arrive whole within `requestTimeout`, whose connections are
    /// closed after `idleTimeout` of silence, and which tells `roster` what each connection does.
    static func http1(requestTimeout: TimeAmount, idleTimeout: TimeAmount, roster: ConnectionRoster, metrics: StoreMetrics, logger: Logger) -> HTTPServerBuilder {
        let configuration = HTTP1Channel.Configuration(
            additionalChannelHandlers: [RequestDeadlineHandler(timeout: requestTimeout, roster: roster, metrics: metrics, logger: logger)],
            idleTimeout: idleTimeout
        )
        return HTTPServerBuilder { responder in DeadlineHTTP1Channel(http1: HTTP1Channel(responder: responder, configuration: configuration)) }
    }
}
