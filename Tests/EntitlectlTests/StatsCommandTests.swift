import EntitledTestSupport
import Testing

/// `entitlectl stats` against a real server: the counters as a person reads them.
@Suite struct StatsCommandTests {
    @Test func statsPrintsTotalsAndATableOfTheOperationsRunWithTheirLatency() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        #expect(try ConsoleRun.run(port + ["grant", "user:u1", "prod_pro"]).status == 0)
        #expect(try ConsoleRun.run(port + ["grant", "device:d1", "prod_pro"]).status == 0)
        #expect(try ConsoleRun.run(port + ["check", "user:u1", "prod_pro"]).status == 0)
        #expect(try ConsoleRun.run(port + ["--yes", "revoke", "mem_0000000000000", "refund"]).status == 1)

        let run = try ConsoleRun.run(port + ["stats"])
        #expect(run.status == 0)
        let lines = run.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first?.hasPrefix("entitled 0.1.0, up ") == true, "\(run.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("connections") && $0.contains("1 open, 5 accepted, 0 refused (busy), 0 closed idle") })
        #expect(lines.contains("store        1 user, 1 device, 2 memberships, 0 entitlements"), "\(run.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("log") && $0.contains("fsync always; last change 2, 2 changes since the snapshot") })
        #expect(lines.contains("snapshot     none yet"))
        #expect(lines.contains("requests     4 in all, 0 invalid; 1 error (not_found 1)"), "\(run.standardOutput)")

        let header = try #require(lines.firstIndex { $0.hasPrefix("OPERATION") })
        // The words, not the spacing: columns are as wide as their widest number, and a loaded machine
        // makes a latency of 10 ms or more (one digit more) now and then.
        #expect(lines[header].split(separator: " ") == ["OPERATION", "REQUESTS", "P50", "µs", "P90", "µs", "P99", "µs", "P99.9", "µs", "MAX", "µs"])
        let rows = lines[(header + 1)...].filter { !$0.isEmpty }
        #expect(rows.map { $0.split(separator: " ").prefix(2).joined(separator: " ") } == ["grant 2", "check 1", "revoke 1"])
    }
}
