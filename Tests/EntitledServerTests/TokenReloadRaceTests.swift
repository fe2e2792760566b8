import Dispatch
import EntitledClient
import EntitledCore
import EntitledTestSupport
import Foundation
import Testing

@testable import EntitledServer

/// Two reloads in quick succession, in an in-process server whose one event loop the test holds still, so
/// that the order of events the race needs happens every time rather than once in a thousand runs.
@Suite struct TokenReloadRaceTests {
    static let onlyInA = AuthFileEntry(name: "reader-a", token: "reader-a-0123456789abcdef", role: "check")
    static let onlyInB = AuthFileEntry(name: "reader-b", token: "reader-b-0123456789abcdef", role: "check")

    /// Reload A posts its pass over the connections, reload B puts B's tokens in force, a client
    /// authenticates with a token only B lists, and only then does the loop run A's pass (then B's). The
    /// pass must measure the connection against the tokens in force when it runs (B's), not against those
    /// its reload read (A's): else A's pass takes the role B just gave, and B's pass no longer sees a token.
    @Test func aConnectionThatAuthenticatedWithTheNewestTokensKeepsItsRoleWhenAnOlderReloadIsAppliedAfter() async throws {
        let directory = try TemporaryDirectory()
        let authFile = directory.path + "/auth.json"
        try AuthFileEntry.writeAuthFile([.admin], to: authFile)
        let tokens = try AccessTokens(contentsOfFile: authFile)
        let socketPath = directory.path + "/entitled.sock"
        var configuration = ServerConfiguration(tcp: nil, unixSocketPath: socketPath, eventLoops: 1)
        configuration.accessTokens = tokens
        configuration.accessTokenFile = authFile
        let server = EntitledServer(store: EntitlementStore(), configuration: configuration)
        try await server.start()
        let outcome: (auth: EntitledResponse, check: EntitledResponse, reloaded: [Int])
        do {
            outcome = try await Self.authenticateBetweenTwoReloads(server: server, authFile: authFile, socketPath: socketPath)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        #expect(outcome.reloaded == [2, 2])
        #expect(outcome.auth.isOK, "\(outcome.auth.line)")
        #expect(outcome.auth["role"]?.stringValue == "check", "\(outcome.auth.line)")
        #expect(outcome.check.isOK, "the connection lost the role its token has: \(outcome.check.line)")
    }

    /// Holds the server's one loop, reloads A then B, sends `auth` with B's token, lets the loop go; returns
    /// the answers to that `auth` and to a `check` after it, and the token counts the reloads answered.
    static func authenticateBetweenTwoReloads(
        server: EntitledServer, authFile: String, socketPath: String
    ) async throws -> (auth: EntitledResponse, check: EntitledResponse, reloaded: [Int]) {
        let loop = try #require(server.runningLoops.first)
        return try await onDedicatedThread {
            let client = try RawSocket(unixSocketPath: socketPath)
            // A round trip first: the connection is then the loop's, idle, before the loop is held.
            try client.send(#"{"op":"ping"}"# + "\n")
            guard try client.readResponse().isOK else { throw TestSupportFailure(description: "ping refused") }

            // Held after a turn's I/O and posted tasks (`afterCurrentTurn`): what is posted meanwhile runs
            // in the next turn, after that turn's reads.
            let held = DispatchSemaphore(value: 0)
            let released = DispatchSemaphore(value: 0)
            defer { released.signal() }  // a test failing half-way must not leave the loop held (stop would hang)
            loop.execute {
                loop.afterCurrentTurn {
                    held.signal()
                    released.wait()
                }
            }
            held.wait()
            try AuthFileEntry.writeAuthFile([.admin, Self.onlyInA], to: authFile)
            var reloaded = [try server.reloadAccessTokens()]  // reload A: its pass waits behind the held turn
            try AuthFileEntry.writeAuthFile([.admin, Self.onlyInB], to: authFile)
            reloaded.append(try server.reloadAccessTokens())  // reload B: in force now, its pass queued after A's
            // A Unix socket's write is in the server's receive queue when it returns: the next turn reads it
            // before it runs the passes.
            try client.send(#"{"op":"auth","token":"\#(Self.onlyInB.token)"}"# + "\n")
            released.signal()
            // The answer is flushed at the end of the turn, so both passes have run by the time it arrives.
            let auth = try client.readResponse()
            try client.send(#"{"op":"check","user":"u1"}"# + "\n")
            return (auth, try client.readResponse(), reloaded)
        }
    }
}
