import EntitledTestSupport
import Foundation
import Testing

/// The Python client's own tests (Protocol/clients/python), run against the `entitled` binary this build
/// made, so that `swift test` is the whole test suite: the protocol's language neutrality is tested with
/// everything else.
@Suite("The Python client against the real server")
struct PythonClientTests {
    @Test func thePythonClientsTestsPass() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-m", "unittest", "discover", "-s", "Protocol/clients/python"]
        process.currentDirectoryURL = root
        var environment = ProcessInfo.processInfo.environment
        environment["ENTITLED_BINARY"] = ServerProcess.executableURL.path
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "python3 -m unittest failed:\n\(text)")
        #expect(text.contains("OK"), "\(text)")
    }
}
