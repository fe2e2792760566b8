import NIOCore
import NIOHTTP1

/// Answers one HTTP connection's requests: `GET` (or `HEAD`) `/metrics` with the exporter's text.
final class MetricsRequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let exporter: PrometheusExporter
    private var head: HTTPRequestHead?

    init(exporter: PrometheusExporter) {
        self.exporter = exporter
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body:
            break  // a scrape has no body; whatever comes is dropped
        case .end:
            guard let head else { return }
            self.head = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        let status: HTTPResponseStatus
        var body: [UInt8]
        var contentType = "text/plain; charset=utf-8"
        if path != "/metrics" {
            (status, body) = (.notFound, Array("not found: the metrics are at /metrics\n".utf8))
        } else if head.method != .GET && head.method != .HEAD {
            (status, body) = (.methodNotAllowed, Array("use GET\n".utf8))
        } else {
            status = .ok
            body = exporter.scrape()
            contentType = "text/plain; version=0.0.4; charset=utf-8"
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.count))
        if status == .methodNotAllowed { headers.add(name: "Allow", value: "GET, HEAD") }
        let keepAlive = head.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if head.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
        body.removeAll()
    }
}
