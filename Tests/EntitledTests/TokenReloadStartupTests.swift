import EntitledClient
import EntitledServer
import EntitledStorage
import EntitledTestSupport
import Foundation
import NIOCore
import Testing

/// SIGHUP while the real executable starts: `systemctl reload` (ExecReload=kill -HUP) can come at any moment,
/// a long recovery of the data directory included, and must never end the server.
@Suite struct TokenReloadStartupTests {
    static let first = AuthFileEntry(name: "first-reader", token: "first-reader-0123456789abcdef", role: "check")
    static let second = AuthFileEntry(name: "second-reader", token: "second-reader-0123456789abcdef", role: "check")

    /// Sends SIGHUP to `pid` about every millisecond, on a thread of its own, until `stop()`.
    final class Hangups: @unchecked Sendable {
        private let lock = NSLock()
        private var stopping = false
        private var sent = 0
        private let finished = DispatchSemaphore(value: 0)

        init(to pid: Int32) {
            Thread { [self] in
                while lock.withLock({ !stopping }) {
                    kill(pid, SIGHUP)
                    lock.withLock { sent += 1 }
                    usleep(1000)
                }
                finished.signal()
            }.start()
        }

        /// Stops sending; returns how many were sent.
        func stop() -> Int {
            lock.withLock { stopping = true }
            finished.wait()
            return lock.withLock { sent }
        }
    }

    /// Writes `count` grants into the data directory `path`, logged and never snapshotted, so that a server
    /// started on it replays them all: a start long enough for signals to land in the middle of it.
    static func writeDataDirectory(at path: String, grants count: Int) throws {
        let durable = try DurableStore(directory: path, policy: .no)
        let processor = RequestProcessor(durable: durable)
        var output = ByteBuffer()
        for index in 0..<count {
            processor.respond(to: ByteBuffer(string: #"{"op":"grant","user":"u\#(index)","product":"p"}"#), into: &output)
            output.clear()
        }
        durable.close()
    }

    static func serverProcess(
        in directory: TemporaryDirectory, authFile: String, environment: [String: String] = [:], logLevel: String = "info"
    ) -> ServerProcess {
        ServerProcess(
            arguments: [
                "--port", "0", "--auth", authFile, "--event-loops", "1", "--log-format", "json", "--snapshot-interval", "0",
                "--log-level", logLevel,
                // No authentication deadline: see TokenReloadTests.AuthenticatingServer.
                "--auth-timeout", "0",
            ],
            workingDirectory: directory.path,
            environment: environment,
            unblockedSignals: true
        )
    }

    @Test func sighupsFromTheFirstLinesOfTheStartOnDoNotEndTheServerWhichThenServes() async throws {
        let directory = try TemporaryDirectory()
        let authFile = directory.path + "/auth.json"
        try AuthFileEntry.writeAuthFile([.admin, Self.first], to: authFile)
        try Self.writeDataDirectory(at: directory.path + "/entitled-data", grants: 50_000)  // about half a second of recovery in a debug build
        // Only warnings are logged: every SIGHUP that lands once the server catches them is a reload, logged
        // at notice, and hundreds of those lines would fill the standard error pipe this test reads only
        // later, blocking the server's logging. An unknown variable makes the server warn first thing in its
        // `main`, before the auth file is read and the data directory recovered: from there on a SIGHUP
        // ended a server whose handler was installed only with its services (that binary, run in this test,
        // died at the first signal; this one serves after hundreds).
        let process = Self.serverProcess(
            in: directory, authFile: authFile, environment: ["ENTITLED_NO_SUCH_SETTING": "1"], logLevel: "warning"
        )
        try process.start()
        #expect(process.waitForStandardError(containing: "ignoring unknown environment variables"))
        let hangups = Hangups(to: process.process.processIdentifier)
        let port: Int?
        do {
            port = try process.waitUntilReady()
        } catch {
            _ = hangups.stop()
            throw error
        }
        let sent = hangups.stop()
        #expect(sent > 0)
        let connection = try await EntitledAsyncConnection.local(port: try #require(port))
        #expect(try await connection.send(line: #"{"op":"auth","token":"\#(Self.first.token)"}"#).isOK)
        #expect(try await connection.send(line: #"{"op":"check","user":"u1"}"#).isOK)
        #expect(process.stop() == 0, "\(process.standardErrorText())")
    }

    @Test func aSighupWhileTheServerStartsIsActedOnOnceItServes() async throws {
        let directory = try TemporaryDirectory()
        let authFile = directory.path + "/auth.json"
        try AuthFileEntry.writeAuthFile([.admin, Self.first], to: authFile)
        let process = Self.serverProcess(in: directory, authFile: authFile)
        try process.start()
        // Logged once the auth file is read, before the data directory is recovered: the file is rotated
        // after the start read it, so only the SIGHUP can put the second token in force.
        #expect(process.waitForStandardError(containing: "starting entitled"))
        try AuthFileEntry.writeAuthFile([.admin, Self.second], to: authFile)
        kill(process.process.processIdentifier, SIGHUP)
        let port = try #require(try process.waitUntilReady())
        #expect(process.waitForStandardError(containing: "reloaded the auth file"))

        let added = try await EntitledAsyncConnection.local(port: port)
        #expect(try await added.send(line: #"{"op":"auth","token":"\#(Self.second.token)"}"#).isOK)
        let removed = try await EntitledAsyncConnection.local(port: port)
        #expect(try await removed.send(line: #"{"op":"auth","token":"\#(Self.first.token)"}"#).errorCode == "unauthorized")
        #expect(process.stop() == 0, "\(process.standardErrorText())")
    }
}
