import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Token rotation without a restart, on the real executable: SIGHUP and the `reload` operation re-read the
/// `--auth` file; new tokens work at once, removed ones are refused, a broken file keeps the old tokens.
@Suite struct TokenReloadTests {
    static let first = AuthFileEntry(name: "first-reader", token: "first-reader-0123456789abcdef", role: "check")
    static let second = AuthFileEntry(name: "second-reader", token: "second-reader-0123456789abcdef", role: "check")

    /// An `entitled` with one event loop and an auth file of `tokens`, logging JSON at info level.
    struct AuthenticatingServer {
        let directory: TemporaryDirectory
        let authFile: String
        let process: ServerProcess
        let port: Int

        init(tokens: [AuthFileEntry]) throws {
            directory = try TemporaryDirectory()
            authFile = directory.path + "/auth.json"
            try AuthFileEntry.writeAuthFile(tokens, to: authFile)
            process = ServerProcess(
                // No authentication deadline: these tests await between connecting and `auth`, and a loaded
                // runner has held such a task for longer than the default 30 s (AuthenticationDeadlineTests
                // test the deadline, without awaits in between).
                arguments: [
                    "--port", "0", "--auth", authFile, "--event-loops", "1", "--log-format", "json", "--snapshot-interval", "0",
                    "--auth-timeout", "0",
                ],
                workingDirectory: directory.path
            )
            port = try #require(try process.startAndWaitUntilReady())
        }

        func rotate(to tokens: [AuthFileEntry]) throws {
            try AuthFileEntry.writeAuthFile(tokens, to: authFile)
        }

        func hangUp() {
            kill(process.process.processIdentifier, SIGHUP)
        }

        /// A new connection that sends `auth` with `entry`'s token; returns it and the answer.
        func authenticate(_ entry: AuthFileEntry) async throws -> (EntitledAsyncConnection, EntitledResponse) {
            let connection = try await EntitledAsyncConnection.local(port: port)
            let answer = try await connection.send(line: #"{"op":"auth","token":"\#(entry.token)"}"#)
            return (connection, answer)
        }
    }

    /// Sends `line` until the answer's error code is `code` (the loops apply a reload to their connections
    /// just after it is in force), at most for ten seconds; returns the last answer.
    static func answer(
        _ connection: EntitledAsyncConnection, to line: String, becomes code: String?
    ) async throws -> EntitledResponse {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let answer = try await connection.send(line: line)
            if answer.errorCode == code || ContinuousClock.now > deadline { return answer }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test func sighupPutsNewTokensInForceAndTakesTheRoleOfRemovedOnes() async throws {
        let server = try AuthenticatingServer(tokens: [.admin, Self.first])
        let (early, accepted) = try await server.authenticate(Self.first)
        #expect(accepted.isOK)
        #expect(try await early.send(line: #"{"op":"check","user":"u1"}"#).isOK)
        // The second token is not known yet.
        #expect(try await server.authenticate(Self.second).1.errorCode == "unauthorized")

        try server.rotate(to: [.admin, Self.second])
        server.hangUp()
        #expect(server.process.waitForStandardError(containing: "reloaded the auth file"))

        let (_, added) = try await server.authenticate(Self.second)
        #expect(added.isOK, "\(added.line)")
        #expect(added["name"] == .string(Self.second.name))
        // The removed token is refused on a new connection...
        #expect(try await server.authenticate(Self.first).1.errorCode == "unauthorized")
        // ...and the connection that authenticated with it has lost its role.
        let revoked = try await Self.answer(early, to: #"{"op":"check","user":"u1"}"#, becomes: "unauthorized")
        #expect(revoked.errorCode == "unauthorized", "\(revoked.line)")
        // Authenticating again with it is refused too.
        #expect(try await early.send(line: #"{"op":"auth","token":"\#(Self.first.token)"}"#).errorCode == "unauthorized")
        // The admin token was kept: its role too.
        let (_, admin) = try await server.authenticate(.admin)
        #expect(admin["role"] == .string("admin"))

        #expect(server.process.stop() == 0)
        let log = server.process.standardErrorText()
        let line = try #require(log.split(separator: "\n").first { $0.contains("reloaded the auth file") }.map(String.init))
        #expect(line.contains(#""tokens":"2""#), "\(line)")
        #expect(line.contains(#""added":"second-reader""#), "\(line)")
        #expect(line.contains(#""removed":"first-reader""#), "\(line)")
        for entry in [AuthFileEntry.admin, Self.first, Self.second] {
            #expect(!log.contains(entry.token))
        }
    }

    @Test func aBrokenFileOnSighupIsRefusedWithAClearLogLineAndTheOldTokensStay() async throws {
        let server = try AuthenticatingServer(tokens: [.admin, Self.first])
        let (early, _) = try await server.authenticate(Self.first)
        try #"[{"name": "second-reader", "token": "second-reader-0123456789abcdef", "role": "check"}"#
            .write(toFile: server.authFile, atomically: true, encoding: .utf8)
        server.hangUp()
        #expect(server.process.waitForStandardError(containing: "the auth file was not reloaded"))

        #expect(try await server.authenticate(Self.first).1.isOK)
        #expect(try await early.send(line: #"{"op":"check","user":"u1"}"#).isOK)
        #expect(try await server.authenticate(Self.second).1.errorCode == "unauthorized")

        #expect(server.process.stop() == 0)
        let log = server.process.standardErrorText()
        let line = try #require(log.split(separator: "\n").first { $0.contains("was not reloaded") }.map(String.init))
        #expect(line.contains(server.authFile), "\(line)")
        #expect(line.contains("not valid JSON"), "\(line)")
        #expect(line.contains("the tokens in force before stay in force"), "\(line)")
        #expect(!log.contains(Self.second.token))
    }

    @Test func theReloadOperationRereadsTheFileAndAnswersTheNumberOfTokens() async throws {
        let server = try AuthenticatingServer(tokens: [.admin, Self.first])
        let (admin, _) = try await server.authenticate(.admin)

        try server.rotate(to: [.admin, Self.first, Self.second])
        let reloaded = try await admin.send(line: #"{"op":"reload","id":9}"#)
        #expect(reloaded.isOK, "\(reloaded.line)")
        #expect(reloaded["tokens"] == .number("3"))
        #expect(reloaded["id"] == .number("9"))
        // In force as soon as the answer is in.
        #expect(try await server.authenticate(Self.second).1.isOK)

        // A removed token is refused on a new connection as soon as the answer is in.
        try server.rotate(to: [.admin, Self.second])
        #expect(try await admin.send(line: #"{"op":"reload"}"#)["tokens"] == .number("2"))
        #expect(try await server.authenticate(Self.first).1.errorCode == "unauthorized")

        // A broken file: an error naming the problem, and the tokens in force stay.
        try "[]".write(toFile: server.authFile, atomically: true, encoding: .utf8)
        let refused = try await admin.send(line: #"{"op":"reload"}"#)
        #expect(refused.errorCode == "internal", "\(refused.line)")
        #expect(refused.error?.message.contains("lists no token") == true, "\(refused.line)")
        // The file is named even when the problem is in its content, not in reading it.
        #expect(refused.error?.message.contains("the auth file \(server.authFile) was not reloaded") == true, "\(refused.line)")
        #expect(refused.error?.message.contains("stay in force") == true, "\(refused.line)")
        #expect(try await server.authenticate(Self.second).1.isOK)
        #expect(server.process.stop() == 0)
    }

    @Test func theReloadOperationIsForbiddenToACheckToken() async throws {
        let server = try AuthenticatingServer(tokens: [.admin, Self.first])
        let (reader, _) = try await server.authenticate(Self.first)
        let refused = try await reader.send(line: #"{"op":"reload"}"#)
        #expect(refused.errorCode == "forbidden", "\(refused.line)")
        let anonymous = try await EntitledAsyncConnection.local(port: server.port)
        #expect(try await anonymous.send(line: #"{"op":"reload"}"#).errorCode == "unauthorized")
        #expect(server.process.stop() == 0)
    }

    @Test func withoutAuthTheReloadOperationIsABadRequestAndSighupLeavesTheServerRunning() async throws {
        let directory = try TemporaryDirectory()
        let process = ServerProcess(arguments: ["--port", "0", "--log-format", "json"], workingDirectory: directory.path)
        let port = try #require(try process.startAndWaitUntilReady())
        let connection = try await EntitledAsyncConnection.local(port: port)
        let refused = try await connection.send(line: #"{"op":"reload"}"#)
        #expect(refused.errorCode == "bad_request", "\(refused.line)")
        #expect(refused.error?.message.contains("without --auth") == true, "\(refused.line)")

        kill(process.process.processIdentifier, SIGHUP)
        #expect(process.waitForStandardError(containing: "started without --auth"))
        #expect(try await connection.send(line: #"{"op":"ping"}"#).isOK)
        #expect(process.stop() == 0)
    }
}
