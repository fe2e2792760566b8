import NIOCore
import NIOHTTP1
import NIOPosix

/// A small HTTP/1.1 server for Prometheus: `GET /metrics` answers the exporter's text, anything else
/// 404 or 405. It runs on its own SwiftNIO thread, apart from the protocol's event loops and port, so a
/// scrape never delays a check.
public final class MetricsHTTPServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    /// The port bound (the one asked for, or the one the system picked for 0).
    public let port: Int

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, port: Int) {
        self.group = group
        self.channel = channel
        self.port = port
    }

    /// Binds `host:port` and serves `exporter` there until `close()`.
    public static func start(host: String, port: Int, exporter: PrometheusExporter) async throws -> MetricsHTTPServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 64)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(MetricsRequestHandler(exporter: exporter))
                    }
                }
                .bind(host: host, port: port).get()
            return MetricsHTTPServer(group: group, channel: channel, port: channel.localAddress?.port ?? port)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Stops listening and ends the server's thread.
    public func close() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}
