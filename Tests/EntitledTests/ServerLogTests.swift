import EntitledTestSupport
import Foundation
import Testing

/// What `entitled` logs: its effective configuration at start, in text or JSON lines, never a token.
@Suite struct ServerLogTests {
    static let token = "log-test-token-0123456789"

    static func runServer(_ extra: [String]) throws -> String {
        let directory = try TemporaryDirectory()
        let auth = directory.path + "/auth.json"
        try #"[{"name":"ops","token":"\#(token)","role":"admin"}]"#.write(toFile: auth, atomically: true, encoding: .utf8)
        let server = ServerProcess(arguments: ["--port", "0", "--auth", auth] + extra, workingDirectory: directory.path)
        _ = try server.startAndWaitUntilReady()
        #expect(server.stop() == 0)
        return server.standardErrorText()
    }

    @Test func jsonLogLinesAreOneObjectEachAndStartWithTheEffectiveConfiguration() throws {
        let log = try Self.runServer(["--log-format", "json", "--max-connections", "77"])
        let lines = log.split(separator: "\n").map(String.init)
        let objects = try lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
        #expect(objects.count >= 4)
        #expect(objects.allSatisfy { $0["time"] is String && $0["level"] is String && $0["message"] is String })
        let starting = try #require(objects.first { ($0["message"] as? String)?.hasPrefix("starting entitled") == true })
        let settings = try #require(starting["metadata"] as? [String: String])
        #expect(settings["maxConnections"] == "77")
        #expect(settings["auth"]?.hasSuffix("(1 tokens)") == true)
        #expect(settings["tls"] == "off")
        #expect(objects.contains { ($0["message"] as? String) == "stopped" })
        #expect(!log.contains(Self.token))
    }

    @Test func textLogsNameTheConfigurationAndNeverTheToken() throws {
        let log = try Self.runServer([])
        #expect(log.contains("starting entitled"))
        #expect(log.contains("maxConnections=10000"))
        #expect(!log.contains(Self.token))
    }
}
