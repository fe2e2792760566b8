import EntitledTestSupport
import Foundation
import Testing

/// Who may watch every subject, against a real `entitled` with `--auth` (issue #44, part 1): only the
/// admin role, at most 16 connections at once; a watch of everyone ends when its connection's token
/// stops being an admin's, by a new `auth` or by a reload of the auth file.
@Suite struct WatchAccessProcessTests {
    private static func authenticated(_ token: AuthFileEntry, on server: RunningEntitled) throws -> RawSocket {
        let connection = try RawSocket(port: server.port)
        try connection.send(#"{"op":"auth","token":"\#(token.token)"}"# + "\n")
        let answer = try #require(try connection.readLine())
        #expect(answer.contains(#""ok":true"#), "\(answer)")
        return connection
    }

    private static func ask(_ line: String, on connection: RawSocket) throws -> String {
        try connection.send(line + "\n")
        return try #require(try connection.readLine())
    }

    @Test func onlyAnAdminMayWatchEverySubjectAndAtMostSixteenConnectionsAtOnce() throws {
        let server = try RunningEntitled(tokens: [.admin, .writer, .check])
        for token in [AuthFileEntry.check, .writer] {
            let connection = try Self.authenticated(token, on: server)
            let refused = try Self.ask(#"{"op":"watch","all":true}"#, on: connection)
            #expect(refused.contains(#""code":"forbidden""#) && refused.contains("needs the admin role"), "\(token.role): \(refused)")
            // Given users are theirs to watch.
            #expect(try Self.ask(#"{"op":"watch","user":"alice"}"#, on: connection).contains(#""watches":1"#))
        }

        let watchers = try (0..<16).map { _ in try Self.authenticated(.admin, on: server) }
        for watcher in watchers {
            #expect(try Self.ask(#"{"op":"watch","all":true}"#, on: watcher).contains(#""watches":1"#))
        }
        let seventeenth = try Self.authenticated(.admin, on: server)
        let over = try Self.ask(#"{"op":"watch","all":true}"#, on: seventeenth)
        #expect(over.contains(#""code":"over_limit""#) && over.contains("16 connections watch every subject already"), "\(over)")

        // A place frees when a watcher leaves: its close is noticed on the server's loop, so ask until then.
        watchers[0].reset()
        var answer = over
        let deadline = ContinuousClock.now + .seconds(10)
        while answer.contains("over_limit"), ContinuousClock.now < deadline {
            usleep(20_000)
            answer = try Self.ask(#"{"op":"watch","all":true}"#, on: seventeenth)
        }
        #expect(answer.contains(#""watches":1"#), "\(answer)")
    }

    @Test func aWatchOfEverySubjectEndsWhenItsConnectionAuthenticatesAsAWriter() throws {
        let server = try RunningEntitled(tokens: [.admin, .writer])
        let watcher = try Self.authenticated(.admin, on: server)
        #expect(try Self.ask(#"{"op":"watch","all":true}"#, on: watcher).contains(#""watches":1"#))
        #expect(try Self.ask(#"{"op":"watch","user":"alice"}"#, on: watcher).contains(#""watches":2"#))
        #expect(try Self.ask(#"{"op":"auth","token":"\#(AuthFileEntry.writer.token)"}"#, on: watcher).contains(#""ok":true"#))

        try Self.expectOnlyAlicesChangesArePushed(to: watcher, on: server)
    }

    @Test func aReloadThatMakesTheTokenAWritersEndsItsConnectionsWatchOfEverySubject() throws {
        let server = try RunningEntitled(tokens: [.admin, .writer])
        let watcher = try Self.authenticated(.admin, on: server)
        #expect(try Self.ask(#"{"op":"watch","all":true}"#, on: watcher).contains(#""watches":1"#))
        #expect(try Self.ask(#"{"op":"watch","user":"alice"}"#, on: watcher).contains(#""watches":2"#))

        // The same token, now a writer's; another admin token stays to write with.
        let demoted = AuthFileEntry(name: AuthFileEntry.admin.name, token: AuthFileEntry.admin.token, role: "writer")
        let operator_ = AuthFileEntry(name: "operator", token: "operator-secret-91c2d7e4a05b3f68", role: "admin")
        let reloader = try Self.authenticated(.admin, on: server)
        try AuthFileEntry.writeAuthFile([demoted, operator_], to: try #require(server.authFilePath))
        let reloaded = try Self.ask(#"{"op":"reload"}"#, on: reloader)
        #expect(reloaded.contains(#""ok":true"#), "\(reloaded)")
        // The reload is applied on each loop in its turn: the watch of alice is counted alone once it is.
        var count = ""
        let deadline = ContinuousClock.now + .seconds(10)
        repeat {
            usleep(20_000)
            count = try Self.ask(#"{"op":"watch","user":"alice"}"#, on: watcher)
        } while count.contains(#""watches":2"#) && ContinuousClock.now < deadline
        #expect(count.contains(#""watches":1"#), "\(count)")

        try Self.expectOnlyAlicesChangesArePushed(to: watcher, on: server, writingWith: operator_)
    }

    @Test func watchesOfUsersAndDevicesOverEveryConnectionStopAtMaxWatchesAndFreeOnUnwatchAndClose() throws {
        // Without it, --max-connections connections of 1,000 watches each could hold 10 million.
        let server = try RunningEntitled(arguments: ["--max-watches", "3"])
        let first = try RawSocket(port: server.port)
        #expect(try Self.ask(#"{"op":"watch","user":"u1"}"#, on: first).contains(#""watches":1"#))
        #expect(try Self.ask(#"{"op":"watch","user":"u2"}"#, on: first).contains(#""watches":2"#))
        #expect(try Self.ask(#"{"op":"watch","device":"d1"}"#, on: first).contains(#""watches":3"#))

        let second = try RawSocket(port: server.port)
        let refused = try Self.ask(#"{"op":"watch","user":"u9"}"#, on: second)
        #expect(refused.contains(#""code":"over_limit""#) && refused.contains("(--max-watches)"), "\(refused)")
        // What is held already is no new watch, and a watch of every subject is bounded apart.
        #expect(try Self.ask(#"{"op":"watch","user":"u1"}"#, on: first).contains(#""watches":3"#))
        #expect(try Self.ask(#"{"op":"watch","all":true}"#, on: second).contains(#""watches":1"#))

        #expect(try Self.ask(#"{"op":"unwatch","user":"u2"}"#, on: first).contains(#""watches":2"#))
        #expect(try Self.ask(#"{"op":"watch","user":"u9"}"#, on: second).contains(#""watches":2"#))
        #expect(try Self.ask(#"{"op":"watch","user":"u10"}"#, on: second).contains(#""code":"over_limit""#))

        // A closed watcher's places free once its loop notices the close.
        first.reset()
        var answer = ""
        let deadline = ContinuousClock.now + .seconds(10)
        repeat {
            usleep(20_000)
            answer = try Self.ask(#"{"op":"watch","user":"u10"}"#, on: second)
        } while answer.contains("over_limit") && ContinuousClock.now < deadline
        #expect(answer.contains(#""watches":3"#), "\(answer)")
        #expect(try Self.ask(#"{"op":"watch","device":"d2"}"#, on: second).contains(#""watches":4"#))
    }

    @Test func maxWatchesMustBeAWholeNumberOfZeroOrMore() throws {
        let (status, output) = try ServerProcess.runToCompletion("entitled", ["--max-watches=-1", "--port", "0"])
        #expect(status != 0)
        #expect(output.contains("--max-watches must be 0"), "\(output)")
    }

    /// Grants bob, then alice, from another admin connection: `watcher`, which watches alice but no longer
    /// everyone, is pushed alice's grant and not bob's (which would have come first: a watcher is told of
    /// changes in the order they were made).
    private static func expectOnlyAlicesChangesArePushed(
        to watcher: RawSocket, on server: RunningEntitled, writingWith token: AuthFileEntry = .admin
    ) throws {
        let writer = try authenticated(token, on: server)
        #expect(try ask(#"{"op":"grant","user":"bob","product":"pro"}"#, on: writer).contains(#""ok":true"#))
        #expect(try ask(#"{"op":"grant","user":"alice","product":"pro"}"#, on: writer).contains(#""ok":true"#))
        let push = try #require(try watcher.readLine())
        #expect(push.contains(#""push""#) && push.contains(#""user":"alice""#), "the first pushed line is not alice's grant: \(push)")
    }
}
