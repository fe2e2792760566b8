import EntitledTestSupport
import Foundation
import Testing

/// The short form of `Tools/faults/run.py`: three real nodes on a real PostgreSQL primary with a synchronous
/// streaming standby, eight workers writing and reading on every node, and each kind of fault once (kill -9,
/// SIGSTOP, a failover: the primary stopped, the standby promoted and the nodes' proxies re-pointed at it,
/// then pg_terminate_backend and `pg_ctl stop -m immediate` on the promoted primary, and a held, cut and
/// split COMMIT on one node's link). The script checks every promise of PROTOCOL.md "What an answer means"
/// against what the nodes hold at the end (with a synchronous standby a failover loses nothing acknowledged,
/// so every promise holds across it); the long form is the same script with a longer `--duration`
/// (Protocol/CLUSTER.md, "Testing under faults"). About 95 s.
@Suite("A Jepsen-style run: every kind of fault once, every promise checked")
struct ClusterFaultRunTests {
    static var scriptPath: String {
        URL(fileURLWithPath: FaultProxy.scriptPath).deletingLastPathComponent().appendingPathComponent("run.py").path
    }

    @Test(.requiresPostgres, .timeLimit(.minutes(6)))
    func everyPromiseHoldsWhileNodesAreKilledStoppedAndCutFromTheirDatabaseAndTheDatabaseFailsOver() async throws {
        let directory = try TemporaryDirectory()
        let reportPath = directory.path + "/report.json"
        let outputPath = directory.path + "/output.txt"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", Self.scriptPath, "--entitled", ServerProcess.executableURL.path,
            "--duration", "80", "--report", reportPath,
        ]
        process.standardOutput = output
        process.standardError = output
        // Awaited, not waited for: a blocked thread of the test runner's small pool (two here) would stall
        // every other test for the run's minute and a half.
        try await withCheckedThrowingContinuation { (finished: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in finished.resume() }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                finished.resume(throwing: error)
            }
        }
        try output.close()
        let printed = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""

        let report = try #require(
            try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: reportPath))) as? [String: Any],
            "run.py wrote no report; it printed: \(printed.suffix(4000))"
        )
        let violations = report["violations"] as? [String] ?? ["(no list of violations in the report)"]
        #expect(violations.isEmpty, "\(violations.count) promises broke, among them: \(violations.prefix(20).joined(separator: "\n"))")
        let faults = Set(report["faults"] as? [String] ?? [])
        #expect(
            faults.isSuperset(of: ["kill9", "sigstop", "failover", "terminate", "pgstop", "hold", "cut", "split"]), "faults run: \(faults)"
        )
        // Enough traffic that every fault met writes in flight.
        #expect((report["acknowledgedWrites"] as? Int ?? 0) > 1000, "\(report)")
        #expect(process.terminationStatus == 0, "run.py ended with \(process.terminationStatus): \(printed.suffix(4000))")
    }
}
