import EntitledTestSupport
import Foundation
import Testing

/// The protocol conformance scenarios (Protocol/conformance/*.ndjson), run by Tools/conformance/run.py against
/// a real `entitled` process, with every request and response checked against Protocol/schema/.
@Suite("Protocol conformance scenarios")
struct ConformanceTests {
    @Test func everyScenarioPassesAgainstARealServer() throws {
        let server = try RunningEntitled()
        defer { server.stop() }
        let run = try PythonRun(
            interpreter: PythonRun.interpreterWithJSONSchema(),
            ["Tools/conformance/run.py", "--require-schema", "--host", "127.0.0.1", "--port", String(server.port)]
        )
        #expect(run.exitedNormally && run.status == 0, "run.py exited with status \(run.status):\n\(run.output)")
        #expect(run.output.contains("PASS "), "run.py ran no scenario:\n\(run.output)")
    }

    @Test func everyRestrictedScenarioPassesAgainstAServerWithTokensAndAConnectionLimit() throws {
        let server = try RunningEntitled(
            arguments: ["--auth", "Protocol/conformance/restricted/auth.json", "--max-connections", "4"].map(Self.fromRepository)
        )
        defer { server.stop() }
        let scenarios = try FileManager.default.contentsOfDirectory(atPath: Self.fromRepository("Protocol/conformance/restricted/"))
            .filter { $0.hasSuffix(".ndjson") }.sorted().map { "Protocol/conformance/restricted/" + $0 }
        #expect(scenarios.count >= 2)
        let run = try PythonRun(
            interpreter: PythonRun.interpreterWithJSONSchema(),
            ["Tools/conformance/run.py", "--require-schema", "--host", "127.0.0.1", "--port", String(server.port)] + scenarios,
            // The clean-up's admin token, where `ps` does not show it (a public test value all the same).
            environment: ["ENTITLED_TOKEN": "conformance-admin-token-0001"]
        )
        #expect(run.exitedNormally && run.status == 0, "run.py exited with status \(run.status):\n\(run.output)")
        #expect(run.output.components(separatedBy: "PASS ").count - 1 == scenarios.count, "\(run.output)")
    }

    /// A repository-relative path made absolute (the server runs in its own temporary directory); other
    /// arguments unchanged.
    static func fromRepository(_ argument: String) -> String {
        argument.hasPrefix("Protocol/") ? PythonRun.packageRoot.appendingPathComponent(argument).path : argument
    }
}
