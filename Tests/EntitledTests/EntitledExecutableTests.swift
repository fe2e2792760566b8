import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

@Suite("The entitled executable, as a real process")
struct EntitledExecutableTests {
    @Test func itPrintsAListeningLineWithTheRealPortAndAnswersOnIt() async throws {
        let directory = try TemporaryDirectory()
        let server = ServerProcess(arguments: ["--port", "0"], workingDirectory: directory.path)
        let port = try #require(try server.startAndWaitUntilReady())
        #expect(port > 0)
        #expect(server.readyLine.contains("listening on"))
        let connection = try await EntitledAsyncConnection.local(port: port)
        #expect(try await connection.send(line: #"{"op":"ping","id":"hello"}"#)["id"]?.stringValue == "hello")
        // The embedded default data directory is created in the working directory.
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: directory.path + "/entitled-data", isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
        #expect(server.stop() == 0)
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalStopsItGracefullyWithExitStatusZero(signal: Int32) async throws {
        let directory = try TemporaryDirectory()
        let socketPath = directory.path + "/entitled.sock"
        let server = ServerProcess(
            arguments: ["--port", "0", "--socket", socketPath, "--data-dir", directory.path + "/data"],
            workingDirectory: directory.path
        )
        try server.startAndWaitUntilReady()
        #expect(server.readyLine.contains("unix \(socketPath)"))
        // Raw: the test reads the end of stream the stopping server must send.
        let connection = try RawSocket(unixSocketPath: socketPath)
        try connection.send(#"{"op":"ping"}"# + "\n")
        #expect(try connection.readResponse().isOK)
        #expect(server.stop(with: signal) == 0)
        #expect(try connection.isClosedByServer())
        #expect(!FileManager.default.fileExists(atPath: socketPath))
    }

    @Test func itServesOnlyTheUnixSocketWithNoTCP() async throws {
        let directory = try TemporaryDirectory()
        let socketPath = directory.path + "/only.sock"
        let server = ServerProcess(arguments: ["--no-tcp", "--socket", socketPath], workingDirectory: directory.path)
        let port = try server.startAndWaitUntilReady()
        #expect(port == nil)
        #expect(!server.readyLine.contains("tcp"))
        #expect(try await EntitledAsyncConnection.connect(to: .unixSocket(path: socketPath)).send(line: #"{"op":"ping"}"#).isOK)
        #expect(server.stop() == 0)
    }

    @Test func theMaximumLineLengthFlagChangesTheLimit() async throws {
        let directory = try TemporaryDirectory()
        let server = ServerProcess(arguments: ["--port", "0", "--max-line-length", "64"], workingDirectory: directory.path)
        let port = try #require(try server.startAndWaitUntilReady())
        let connection = try await EntitledAsyncConnection.local(port: port)
        #expect(try await connection.send(line: #"{"op":"ping"}"#).isOK)
        let padding = String(repeating: "x", count: 80)
        #expect(try await connection.send(line: #"{"op":"ping","padding":"\#(padding)"}"#).errorCode == "too_large")
        #expect(server.stop() == 0)
    }

    @Test func aPortAlreadyInUseStopsTheStartWithAClearMessage() async throws {
        let directory = try TemporaryDirectory()
        let first = ServerProcess(arguments: ["--port", "0"], workingDirectory: directory.path)
        let port = try #require(try first.startAndWaitUntilReady())
        let second = ServerProcess(arguments: ["--port", "\(port)", "--data-dir", "other"], workingDirectory: directory.path)
        let status = try second.runToExit()
        #expect(status != 0)
        #expect(second.standardErrorText().contains("cannot listen on 127.0.0.1:\(port)"))
        #expect(first.stop() == 0)
    }

    @Test(arguments: [
        (["--port", "70000"], "--port must be between 0 and 65535"),
        (["--no-tcp"], "--no-tcp needs --socket"),
        (["--max-line-length", "0"], "--max-line-length must be between 1 and"),
        (["--max-line-length", "9223372036854775807"], "--max-line-length must be between 1 and"),
        (["--log-level", "loud"], "log-level"),
        (["--busy-poll=-1"], "--busy-poll must be between 0 and 10000 microseconds"),
        (["--busy-poll", "10001"], "--busy-poll must be between 0 and 10000 microseconds"),
    ])
    func invalidFlagsAreRefusedWithAMessage(arguments: [String], message: String) async throws {
        let directory = try TemporaryDirectory()
        let server = ServerProcess(arguments: arguments, workingDirectory: directory.path)
        #expect(try server.runToExit() != 0)
        #expect(server.standardErrorText().contains(message))
    }

    @Test func helpDocumentsTheEmbeddedDefaults() async throws {
        let directory = try TemporaryDirectory()
        let help = ServerProcess(arguments: ["--help"], workingDirectory: directory.path)
        #expect(try help.runToExit() == 0)
        let text = help.standardOutputText()
        #expect(text.contains("127.0.0.1"))
        #expect(text.contains("7117"))
        #expect(text.contains("./entitled-data"))
        #expect(text.contains("--socket"))
    }
}
