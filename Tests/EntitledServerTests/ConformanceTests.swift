import EntitledTestSupport
import Foundation
import Testing

/// The protocol conformance scenarios (Protocol/conformance/*.ndjson), run by Tools/conformance/run.py against
/// a real `entitled` process, with every request and response checked against Protocol/schema/.
@Suite("Protocol conformance scenarios")
struct ConformanceTests {
    /// The package root: this file is Tests/EntitledServerTests/ConformanceTests.swift.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyScenarioPassesAgainstARealServer() throws {
        let server = try RunningEntitled()
        defer { server.stop() }

        let runner = Process()
        runner.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        runner.arguments = [
            try Self.pythonWithJSONSchema(), "Tools/conformance/run.py", "--require-schema", "--host", "127.0.0.1",
            "--port", String(server.port),
        ]
        runner.currentDirectoryURL = Self.packageRoot
        let output = Pipe()
        runner.standardOutput = output
        runner.standardError = output
        try runner.run()
        // Read before waiting, so that a full pipe cannot block the runner.
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        runner.waitUntilExit()

        #expect(
            runner.terminationReason == .exit && runner.terminationStatus == 0,
            "run.py exited with status \(runner.terminationStatus):\n\(text)"
        )
        #expect(text.contains("PASS "), "run.py ran no scenario:\n\(text)")
    }

    /// The first Python that can import `jsonschema`: the one on PATH, else the system's, where .ci/run
    /// installs Debian's python3-jsonschema. Without either the test fails, naming what to install.
    static func pythonWithJSONSchema() throws -> String {
        for candidate in ["python3", "/usr/bin/python3"] {
            let probe = Process()
            probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            probe.arguments = [candidate, "-c", "import jsonschema"]
            probe.standardOutput = FileHandle.nullDevice
            probe.standardError = FileHandle.nullDevice
            guard (try? probe.run()) != nil else { continue }
            probe.waitUntilExit()
            if probe.terminationStatus == 0 { return candidate }
        }
        Issue.record("no python3 can import jsonschema: install Debian's python3-jsonschema (apt-get install -y python3-jsonschema)")
        return "python3"
    }
}
