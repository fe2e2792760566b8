import EntitledMetrics
import EntitledTestSupport
import Foundation
import Testing

/// `MetricsHTTPServer` in process: what it answers to which request, on a port of the system's choosing.
@Suite struct MetricsHTTPServerTests {
    static func withMetricsServer(_ body: (MetricsHTTPServer) async throws -> Void) async throws {
        try await ExporterServer.with(.memoryOnly) { running in
            let http = try await MetricsHTTPServer.start(host: "127.0.0.1", port: 0, exporter: running.exporter)
            do {
                try await body(http)
                await http.close()
            } catch {
                await http.close()
                throw error
            }
        }
    }

    /// The header's value in a response's header block, if it has the header.
    static func header(_ name: String, in headers: String) -> String? {
        headers.split(whereSeparator: \.isNewline).first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    @Test func getOfMetricsAnswersTheExpositionWithPrometheusContentTypeAndItsLength() async throws {
        try await Self.withMetricsServer { http in
            let answer = try await MetricsScrape.get("/metrics", port: http.port)
            #expect(answer.status == 200)
            #expect(Self.header("Content-Type", in: answer.headers) == "text/plain; version=0.0.4; charset=utf-8")
            #expect(answer.body.contains("# TYPE entitled_requests_total counter"))
            // The body as read joins lines with \n, as sent.
            #expect(Self.header("Content-Length", in: answer.headers) == String(answer.body.utf8.count))
        }
    }

    @Test func aQueryStringIsIgnored() async throws {
        try await Self.withMetricsServer { http in
            let answer = try await MetricsScrape.get("/metrics?name[]=entitled_requests_total", port: http.port)
            #expect(answer.status == 200)
        }
    }

    @Test func headAnswersTheHeadersOfGetWithoutTheBody() async throws {
        try await Self.withMetricsServer { http in
            let answer = try await MetricsScrape.get("/metrics", port: http.port, method: "HEAD")
            #expect(answer.status == 200)
            #expect(answer.body.isEmpty)
            #expect(Int(Self.header("Content-Length", in: answer.headers) ?? "") ?? 0 > 0)
        }
    }

    @Test func anotherMethodIsRefusedWith405NamingGetAndHead() async throws {
        try await Self.withMetricsServer { http in
            let answer = try await MetricsScrape.get("/metrics", port: http.port, method: "POST")
            #expect(answer.status == 405)
            #expect(Self.header("Allow", in: answer.headers) == "GET, HEAD")
        }
    }

    @Test func anotherPathIs404SayingWhereTheMetricsAre() async throws {
        try await Self.withMetricsServer { http in
            let answer = try await MetricsScrape.get("/", port: http.port)
            #expect(answer.status == 404)
            #expect(answer.body.contains("the metrics are at /metrics"))
        }
    }

    @Test func aKeptAliveConnectionIsAnsweredRequestAfterRequest() async throws {
        try await Self.withMetricsServer { http in
            // Two requests in one write; the first keeps the connection, the second closes it.
            let text = try await MetricsScrape.exchange(
                "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                port: http.port
            )
            #expect(text.components(separatedBy: "HTTP/1.1 200 OK").count - 1 == 2, "\(text.prefix(300))")
        }
    }

    @Test func afterCloseThePortIsNoLongerServed() async throws {
        var port = 0
        try await Self.withMetricsServer { http in
            port = http.port
            let answer = try await MetricsScrape.get("/metrics", port: port)
            #expect(answer.status == 200)
        }
        #expect(throws: TestSupportFailure.self) { _ = try LoopbackSocket.connect(port: port) }
    }
}
