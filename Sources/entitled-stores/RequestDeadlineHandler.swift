import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes

/// A request's whole time on one connection: from its first byte (`RequestArrivalHandler`'s event) to the end of
/// its body, at most `--request-timeout`. Hummingbird's idle timeout closes only silence, and every trickled body
/// byte is a part that resets it (issue 44: bodies sent a byte every 8 s stayed open for ever); nginx's
/// `client_header_timeout` and slowloris defences bound the whole request instead.
///
/// Past the deadline the request is answered `408 Request Timeout` with `Connection: close` (unless an answer
/// to it had begun: then the connection is only closed), the route that reads the body learns why
/// (`Interrupted`, not a short body to verify), and the connection is closed after a short linger: its output
/// shut at once, its input read and dropped for `linger`, so that a client still sending gets the 408 rather than
/// a reset. The same happens when the `ConnectionRoster` closes the connection to make room for a new one.
///
/// Sits between Hummingbird's HTTP/1 codec and its connection handler (the channel's additional handlers), and
/// tells the roster what the connection does: idle, reading a request since when, or answering one.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Why a request's body stopped: thrown to the route that reads it, which answers nothing more.
    struct Interrupted: Error, CustomStringConvertible {
        let description: String
    }

    /// A request being read.
    private struct Reading {
        /// When its first byte came.
        var since: NIODeadline
        /// `METHOD /path`, once its head is decoded.
        var target: String?
        var bodyBytes = 0
    }

    private enum Cause {
        case deadline
        case evicted(waited: TimeAmount)
    }

    private let timeout: TimeAmount
    private let linger: TimeAmount
    private let roster: ConnectionRoster
    private let metrics: StoreMetrics
    private let logger: Logger

    private var member: Int?
    private var reading: Reading?
    private var deadline: Scheduled<Void>?
    /// Requests read whole, answers begun and finished: a 408 may be written only while every request before the
    /// one being read is answered and no answer is under way.
    private var requestsRead = 0
    private var responsesBegun = 0
    private var responsesEnded = 0
    private var idleSince = NIODeadline.now()
    /// Set once the connection is being closed: nothing more goes in or out, but the 408.
    private var closing = false
    private var lingerEnd: Scheduled<Void>?
    /// While the client takes none of its answers (the channel not writable): closes the connection at
    /// `timeout`, as nginx's `send_timeout` does. A client that pipelines requests and reads nothing would
    /// otherwise hold its connection, answering for ever, where no eviction may touch it.
    private var stalledAnswer: Scheduled<Void>?

    /// - Parameters:
    ///   - timeout: `--request-timeout`.
    ///   - linger: how long the input of a connection answered 408 is still read (and dropped) before it is closed.
    init(timeout: TimeAmount, linger: TimeAmount = .seconds(1), roster: ConnectionRoster, metrics: StoreMetrics, logger: Logger) {
        self.timeout = timeout
        self.linger = linger
        self.roster = roster
        self.metrics = metrics
        self.logger = logger
    }

    // MARK: The connection's life

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let loop = context.eventLoop
        member = roster.join { expiry in
            loop.execute {
                switch expiry {
                case .evicted(let waited): bound.value.handler.expire(context: bound.value.context, .evicted(waited: waited))
                }
            }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        ended()
    }

    func channelInactive(context: ChannelHandlerContext) {
        ended()
        context.fireChannelInactive()
    }

    /// Leaves the roster and stops the timers (the roster's closure holds this handler until then).
    private func ended() {
        deadline?.cancel()
        deadline = nil
        lingerEnd?.cancel()
        lingerEnd = nil
        stalledAnswer?.cancel()
        stalledAnswer = nil
        if let member { roster.leave(member) }
        member = nil
    }

    // MARK: Requests in

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is RequestArrivalHandler.BytesArrived {
            if !closing, reading == nil { begin(context) }
            return
        }
        if closing {
            // The client shut its side: the linger is over. The output shut by this handler is no news to
            // Hummingbird, which would stop writing and close at once.
            if case ChannelEvent.inputClosed = event { context.close(promise: nil) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            if reading == nil { begin(context) }
            reading?.target = "\(head.method) \(head.path ?? "")"
        case .body(let bytes):
            reading?.bodyBytes += bytes.readableBytes
        case .end:
            deadline?.cancel()
            deadline = nil
            reading = nil
            requestsRead += 1
            reportActivity()
        }
        context.fireChannelRead(data)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stalledAnswer?.cancel()
            stalledAnswer = nil
        } else if stalledAnswer == nil, !closing {
            stalledAnswer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
                stalledAnswer = nil
                guard !closing else { return }
                closing = true
                metrics.timedOut()
                let peer = context.channel.remoteAddress?.ipAddress ?? "?"
                logger.warning(
                    "closed the connection of \(peer): it took none of its answers for --request-timeout (\(timeout.nanoseconds / 1_000_000_000) s)"
                )
                context.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !closing else { return }
        context.fireErrorCaught(error)
    }

    /// A request's first byte: its time starts.
    private func begin(_ context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        reading = Reading(since: now)
        deadline = context.eventLoop.assumeIsolated().scheduleTask(deadline: now + timeout) { [self] in
            deadline = nil
            expire(context: context, .deadline)
        }
        reportActivity()
    }

    // MARK: Answers out

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !closing else {
            // The route's answer to a request cut short: the 408 went instead.
            promise?.succeed()
            return
        }
        switch unwrapOutboundIn(data) {
        case .head: responsesBegun += 1
        case .body: break
        case .end:
            responsesEnded += 1
            if reading == nil, responsesEnded >= requestsRead { idleSince = .now() }
            reportActivity()
        }
        context.write(data, promise: promise)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // Hummingbird shuts the output once the cut request's answer is "written"; this handler closes the
        // connection when the linger ends.
        if closing, mode == .output {
            promise?.succeed()
            return
        }
        context.close(mode: mode, promise: promise)
    }

    private func reportActivity() {
        guard let member else { return }
        // Answering first: the next request's first bytes while one is answered make it no candidate.
        if responsesEnded < requestsRead {
            roster.report(member, .answering)
        } else if let reading {
            roster.report(member, .reading(since: reading.since))
        } else {
            roster.report(member, .idle(since: idleSince))
        }
    }

    // MARK: Cutting a request short

    private func expire(context: ChannelHandlerContext, _ cause: Cause) {
        guard !closing else {
            // Evicted while lingering: the slot is wanted now.
            context.close(promise: nil)
            return
        }
        if case .evicted = cause, let member {
            // Chosen under the roster's lock a moment ago, on what it knew then: a request that came in whole
            // since (being answered), or one that began since, is no longer the one that waited longest.
            let answering = responsesEnded < requestsRead
            let young = reading.map { NIODeadline.now() - $0.since < roster.evictableAfter } ?? false
            if answering || young {
                roster.spare(member)
                return
            }
        }
        closing = true
        deadline?.cancel()
        deadline = nil
        guard let reading else {
            // Idle between requests: nothing to answer.
            context.close(promise: nil)
            return
        }
        let waited = NIODeadline.now() - reading.since
        let target = reading.target ?? "a request whose header is incomplete"
        let peer = context.channel.remoteAddress?.ipAddress ?? "?"
        let reason: String
        switch cause {
        case .deadline:
            reason = "the request was not complete within --request-timeout (\(timeout.nanoseconds / 1_000_000_000) s)"
            metrics.timedOut()
        case .evicted:
            reason = "the receiver needed the connection for another: its request had waited longest"
        }
        // Every earlier request answered and no answer under way: this request's answer may be the 408.
        let mayAnswer = responsesBegun == responsesEnded && responsesEnded == requestsRead
        if case .deadline = cause {
            logger.warning(
                "\(mayAnswer ? "answered 408 to" : "closed the connection of") \(target) from \(peer): \(reason); \(reading.bodyBytes) body bytes came in \(waited.nanoseconds / 1_000_000) ms"
            )
        }
        guard mayAnswer else {
            context.close(promise: nil)
            return
        }
        if reading.target != nil {
            // The route is reading the body: it learns why it stopped, rather than verifying a short body.
            context.fireErrorCaught(Interrupted(description: reason))
        }
        var headers = HTTPFields()
        headers[.connection] = "close"
        headers[.contentType] = "text/plain; charset=utf-8"
        let body = ByteBuffer(string: "request timeout: \(reason)\n")
        headers[.contentLength] = String(body.readableBytes)
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .requestTimeout, headerFields: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        // Shut the output (the client reads the 408 and an end), keep dropping what still comes for a moment:
        // closing a socket with unread input would send a reset that can destroy the 408 before it is read.
        context.close(mode: .output, promise: nil)
        lingerEnd = context.eventLoop.assumeIsolated().scheduleTask(in: linger) {
            context.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension RequestDeadlineHandler: Sendable {}
