import EntitledClient
import EntitledServer
import EntitledTestSupport
import EntitledWire
import Foundation
import Testing

@testable import EntitledMetrics

/// `PrometheusExporter` over an in-process server: the families it declares are OPERATIONS.md's, its
/// counters follow the server's, and its gauges say what the store and the log hold.
@Suite struct PrometheusExporterTests {
    /// OPERATIONS.md's table of metrics: each backquoted name of a row's first column with the type its
    /// second column gives (one type for the row, or one per name: "gauge, counter").
    static func documentedFamilies() throws -> [String: String] {
        let text = try String(contentsOf: PythonRun.packageRoot.appendingPathComponent("Protocol/OPERATIONS.md"), encoding: .utf8)
        var families: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `entitled_") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let names = cells[0].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
            let types = cells[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            for (index, name) in names.enumerated() { families[name] = types.count == names.count ? types[index] : types[0] }
        }
        return families
    }

    @Test func aServerOnADataDirectoryDeclaresExactlyTheFamiliesOperationsDocumentsApartFromACluster() async throws {
        let documented = try Self.documentedFamilies()
        #expect(documented.count > 40, "the table of OPERATIONS.md was not found: \(documented.count) names")
        try await ExporterServer.with(.dataDirectory) { running in
            // A request, so that the latency histogram of one operation is declared too.
            let connection = try await EntitledAsyncConnection.local(port: running.port)
            #expect(try await connection.send(line: #"{"op":"ping"}"#).isOK)
            await connection.close()
            let declared = declaredFamilies(in: running.scrape())
            let standalone = documented.filter { !$0.key.hasPrefix("entitled_replication_") }
            #expect(declared == standalone)
        }
    }

    @Test func beforeAnyRequestEveryOperationAndErrorCodeHasItsCounterAtZero() async throws {
        try await ExporterServer.with(.memoryOnly) { running in
            let samples = MetricsScrape.samples(running.scrape())
            for operation in Request.Operation.allCases {
                #expect(samples[#"entitled_requests_total{op="\#(operation.rawValue)"}"#] == 0, "\(operation)")
            }
            for code in ErrorCode.allCases {
                #expect(samples[#"entitled_errors_total{code="\#(code.rawValue)"}"#] == 0, "\(code)")
            }
        }
    }

    @Test func countersGrowByWhatTheServerCountedSinceTheLastScrapeAndNoMore() async throws {
        try await ExporterServer.with(.memoryOnly) { running in
            let connection = try await EntitledAsyncConnection.local(port: running.port)
            for _ in 0..<3 { _ = try await connection.send(line: #"{"op":"check","user":"u1"}"#) }
            _ = try await connection.send(line: "not json")
            let first = MetricsScrape.samples(running.scrape())
            #expect(first[#"entitled_requests_total{op="check"}"#] == 3)
            #expect(first[#"entitled_errors_total{code="bad_json"}"#] == 1)
            #expect(first["entitled_invalid_requests_total"] == 1)
            #expect(first["entitled_connections_accepted_total"] == 1)

            // Nothing new: a second scrape reports the same totals, not the server's totals added again.
            #expect(MetricsScrape.samples(running.scrape())[#"entitled_requests_total{op="check"}"#] == 3)
            for _ in 0..<2 { _ = try await connection.send(line: #"{"op":"check","user":"u1"}"#) }
            let third = MetricsScrape.samples(running.scrape())
            #expect(third[#"entitled_requests_total{op="check"}"#] == 5)
            #expect(third[#"entitled_errors_total{code="bad_json"}"#] == 1)
            await connection.close()
        }
    }

    @Test func theLatencyHistogramHasTheDocumentedBoundsCumulativelyAndOnlyForOperationsRun() async throws {
        try await ExporterServer.with(.memoryOnly) { running in
            let connection = try await EntitledAsyncConnection.local(port: running.port)
            for _ in 0..<4 { _ = try await connection.send(line: #"{"op":"check","user":"u1"}"#) }
            await connection.close()
            let text = running.scrape()
            let buckets = text.split(separator: "\n").filter { $0.hasPrefix(#"entitled_request_duration_seconds_bucket{op="check","#) }
            let bounds = buckets.compactMap { line in line.split(separator: "\"").dropFirst(3).first.map(String.init) }
            #expect(bounds == PrometheusExporter.latencyBounds.map { "\($0)" } + ["+Inf"])
            let counts = buckets.compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
            #expect(counts == counts.sorted(), "buckets are cumulative: \(counts)")
            #expect(counts.last == 4)
            #expect(MetricsScrape.samples(text)[#"entitled_request_duration_seconds_count{op="check"}"#] == 4)
            #expect(!text.contains(#"entitled_request_duration_seconds_count{op="grant"}"#), "an operation never run has no histogram")
        }
    }

    @Test func theBuildInfoIsOneLabelledWithTheServersVersion() async throws {
        try await ExporterServer.with(.memoryOnly) { running in
            #expect(MetricsScrape.samples(running.scrape())[#"entitled_build_info{version="\#(EntitledServer.version)"}"#] == 1)
        }
    }

    @Test func onADataDirectoryTheLogGaugesSayWhatTheLogHolds() async throws {
        try await ExporterServer.with(.dataDirectory) { running in
            let connection = try await EntitledAsyncConnection.local(port: running.port)
            for index in 0..<3 { #expect(try await connection.send(line: #"{"op":"grant","user":"u\#(index)","product":"pro"}"#).isOK) }
            await connection.close()
            let samples = MetricsScrape.samples(running.scrape())
            #expect(samples["entitled_store_users"] == 3)
            #expect(samples["entitled_store_memberships"] == 3)
            #expect(samples["entitled_last_change"] == 3)
            #expect(samples["entitled_log_changes_since_snapshot"] == 3)
            #expect(samples["entitled_log_writable"] == 1)
            #expect(samples["entitled_log_needs_restart"] == 0)
            #expect((samples["entitled_log_written_bytes_total"] ?? 0) > 0)
            #expect((samples["entitled_log_syncs_total"] ?? 0) >= 1)
        }
    }

    @Test func withoutADataDirectoryTheLogAndSnapshotGaugesReadZero() async throws {
        try await ExporterServer.with(.memoryOnly) { running in
            let connection = try await EntitledAsyncConnection.local(port: running.port)
            #expect(try await connection.send(line: #"{"op":"grant","user":"u1","product":"pro"}"#).isOK)
            await connection.close()
            let samples = MetricsScrape.samples(running.scrape())
            #expect(samples["entitled_store_memberships"] == 1)
            for name in ["entitled_last_change", "entitled_log_changes_since_snapshot", "entitled_log_writable", "entitled_snapshot_size_bytes", "entitled_log_written_bytes_total"] {
                #expect(samples[name] == 0, "\(name)")
            }
        }
    }
}
