import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `--metrics-port`: Prometheus' text over HTTP from a real `entitled` process.
@Suite struct MetricsEndpointTests {
    /// A real server with metrics on a port of the system's choosing, and that port.
    private static func startServer(_ directory: TemporaryDirectory, extra: [String] = []) throws -> (ServerProcess, port: Int, metricsPort: Int) {
        let process = ServerProcess(
            arguments: ["--port", "0", "--metrics-port", "0", "--log-level", "warning"] + extra, workingDirectory: directory.path
        )
        let port = try #require(try process.startAndWaitUntilReady())
        // "... (data directory ...; metrics http://127.0.0.1:PORT/metrics)"
        let afterHost = try #require(process.readyLine.range(of: "metrics http://127.0.0.1:")).upperBound
        let digits = process.readyLine[afterHost...].prefix { $0.isNumber }
        return (process, port, try #require(Int(digits)))
    }

    @Test func theMetricsCountRequestsErrorsLatencyAndTheStoreInPrometheusFormat() async throws {
        let directory = try TemporaryDirectory()
        // No periodic snapshot: one written meanwhile (on a machine slowed by the rest of the suite) would
        // reset the changes counted since the last.
        let (process, port, metricsPort) = try Self.startServer(directory, extra: ["--snapshot-interval", "0"])
        defer { _ = process.stop() }
        let connection = try await EntitledAsyncConnection.local(port: port)
        #expect(try await connection.send(line: #"{"op":"grant","user":"u1","product":"pro"}"#).isOK)
        for _ in 0..<20 { _ = try await connection.send(line: #"{"op":"check","user":"u1","product":"pro"}"#) }
        _ = try await connection.send(line: "not json")

        let first = try await MetricsScrape.get("/metrics", port: metricsPort)
        #expect(first.status == 200)
        #expect(first.headers.contains("Content-Type: text/plain; version=0.0.4"))
        let metrics = MetricsScrape.samples(first.body)
        #expect(metrics[#"entitled_requests_total{op="check"}"#] == 20)
        #expect(metrics[#"entitled_requests_total{op="grant"}"#] == 1)
        #expect(metrics[#"entitled_errors_total{code="bad_json"}"#] == 1)
        #expect(metrics["entitled_invalid_requests_total"] == 1)
        #expect(metrics["entitled_store_users"] == 1)
        #expect(metrics["entitled_store_memberships"] == 1)
        #expect(metrics["entitled_connections_open"] == 1)
        #expect(metrics["entitled_last_change"] == 1)
        #expect(metrics["entitled_log_changes_since_snapshot"] == 1)
        #expect((metrics["entitled_log_written_bytes_total"] ?? 0) > 0)
        #expect(metrics[#"entitled_build_info{version="0.1.0"}"#] == 1)

        // The histogram: cumulative buckets, ending with +Inf at the count; a sum in seconds.
        let buckets = first.body.split(separator: "\n").filter { $0.hasPrefix(#"entitled_request_duration_seconds_bucket{op="check""#) }
        let counts = buckets.compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
        #expect(counts.count == 20, "19 bounds and +Inf")
        #expect(counts == counts.sorted(), "buckets are cumulative")
        #expect(buckets.last?.contains(#"le="+Inf""#) == true)
        #expect(counts.last == 20)
        #expect(metrics[#"entitled_request_duration_seconds_count{op="check"}"#] == 20)
        let sum = try #require(metrics[#"entitled_request_duration_seconds_sum{op="check"}"#])
        #expect(sum > 0 && sum < 20, "20 checks in seconds: \(sum)")
        #expect(metrics[#"entitled_request_duration_seconds_count{op="ping"}"#] == nil, "no histogram for an operation never run")

        // A second scrape counts on from the first.
        for _ in 0..<5 { _ = try await connection.send(line: #"{"op":"check","user":"u1","product":"pro"}"#) }
        let second = MetricsScrape.samples(try await MetricsScrape.get("/metrics", port: metricsPort).body)
        #expect(second[#"entitled_requests_total{op="check"}"#] == 25)
        #expect(second[#"entitled_request_duration_seconds_count{op="check"}"#] == 25)
        await connection.close()
    }

    @Test func onlyGetOfMetricsIsAnsweredAndTheProtocolPortServesNoHTTP() async throws {
        let directory = try TemporaryDirectory()
        let (process, port, metricsPort) = try Self.startServer(directory)
        defer { _ = process.stop() }
        #expect(try await MetricsScrape.get("/", port: metricsPort).status == 404)
        #expect(try await MetricsScrape.get("/metrics", port: metricsPort, method: "POST").status == 405)
        #expect(try await MetricsScrape.get("/metrics", port: metricsPort, method: "HEAD").status == 200)
        // The protocol port answers an HTTP request line as the bad JSON it is.
        let answer = try await MetricsScrape.exchange("GET /metrics HTTP/1.1\r\n\r\n", port: port)
        #expect(answer.hasPrefix(#"{"ok":false,"error":{"code":"bad_json""#), "\(answer)")
    }

    @Test func theMetricsPortMayNotBeTheProtocolPort() throws {
        let directory = try TemporaryDirectory()
        let process = ServerProcess(arguments: ["--port", "7399", "--metrics-port", "7399"], workingDirectory: directory.path)
        #expect(try process.runToExit() != 0)
        #expect(process.standardErrorText().contains("--metrics-port must differ from --port"))
    }

    @Test func aMetricsPortInUseStopsTheStartSayingSo() throws {
        let directory = try TemporaryDirectory()
        let (first, _, metricsPort) = try Self.startServer(directory)
        defer { _ = first.stop() }
        let second = try TemporaryDirectory()
        let process = ServerProcess(arguments: ["--port", "0", "--metrics-port", String(metricsPort)], workingDirectory: second.path)
        #expect(try process.runToExit() != 0)
        #expect(process.standardErrorText().contains("cannot serve metrics on 127.0.0.1:\(metricsPort)"))
    }

    @Test func withoutTheOptionNoMetricsAreServed() throws {
        let directory = try TemporaryDirectory()
        let process = ServerProcess(arguments: ["--port", "0", "--log-level", "warning"], workingDirectory: directory.path)
        _ = try process.startAndWaitUntilReady()
        defer { _ = process.stop() }
        #expect(!process.readyLine.contains("metrics"))
    }
}
