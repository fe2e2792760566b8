import EntitledClient
import EntitledServer
import EntitledTestSupport
import Foundation
import Testing

/// `--auth`: tokens, roles, refusals and what is never shown, against an in-process server over TCP.
@Suite struct AuthenticationTests {
    static let adminToken = "admin-0123456789abcdef"
    static let checkToken = "check-0123456789abcdef"
    static let writerToken = "writer-0123456789abcdef"

    static func tokens() throws -> AccessTokens {
        try AccessTokens(entries: [
            AccessToken(name: "billing", token: adminToken, role: .admin),
            AccessToken(name: "api", token: checkToken, role: .check),
            AccessToken(name: "stores", token: writerToken, role: .writer),
        ])
    }

    static func withAuthenticatingServer(logs: RecordedLogs? = nil, _ body: (RunningServer) async throws -> Void) async throws {
        let tokens = try tokens()
        try await withTestServer(configure: { $0.accessTokens = tokens }, logs: logs, body)
    }

    @Test func beforeAuthenticatingOnlyPingHelloAndAuthAreAnsweredAndEverythingElseIsUnauthorized() async throws {
        try await Self.withAuthenticatingServer { server in
            let connection = try await server.connect()
            #expect(try await connection.send(line: #"{"op":"ping"}"#).isOK)
            let hello = try await connection.send(line: #"{"op":"hello"}"#)
            #expect(hello["authRequired"] == .bool(true))
            for line in [
                #"{"op":"check","user":"u1"}"#, #"{"op":"catalog"}"#, #"{"op":"watch","all":true}"#,
                // Not bad_request: a client that may not run an operation learns nothing from its fields.
                #"{"op":"grant","id":7}"#,
            ] {
                let answer = try await connection.send(line: line)
                #expect(answer.errorCode == "unauthorized", "\(line) -> \(answer.line)")
            }
            #expect(try await connection.send(line: #"{"op":"grant","id":7}"#)["id"] == .number("7"))
            // Syntax errors are still syntax errors.
            #expect(try await connection.send(line: #"{"op":"#).errorCode == "bad_json")
            #expect(try await connection.send(line: #"{"op":"steal"}"#).errorCode == "unknown_op")
        }
    }

    @Test func aCheckTokenReadsAndIsForbiddenEveryChangeTheTrailAndSnapshots() async throws {
        try await Self.withAuthenticatingServer { server in
            let connection = try await server.connect()
            let auth = try await connection.send(line: #"{"op":"auth","token":"\#(Self.checkToken)","id":1}"#)
            #expect(auth.line == #"{"ok":true,"id":1,"name":"api","role":"check","authRequired":true}"#)
            for line in [
                #"{"op":"check","user":"u1"}"#, #"{"op":"memberships","user":"u1"}"#, #"{"op":"customer","user":"u1"}"#,
                #"{"op":"catalog"}"#, #"{"op":"watch","user":"u1"}"#, #"{"op":"unwatch"}"#, #"{"op":"hello"}"#,
            ] {
                #expect(try await connection.send(line: line).isOK, "\(line)")
            }
            for line in [
                #"{"op":"grant","user":"u1","product":"p"}"#, #"{"op":"claim","device":"d","user":"u1"}"#,
                #"{"op":"revoke","membership":"mem_0000000000000"}"#, #"{"op":"define","entitlement":"e","products":[]}"#,
                #"{"op":"event","membership":"mem_0000000000000","type":"renewal","eventId":"e","eventTime":"2026-01-01T00:00:00Z"}"#,
                #"{"op":"history","user":"u1"}"#, #"{"op":"snapshot"}"#,
            ] {
                let answer = try await connection.send(line: line)
                #expect(answer.errorCode == "forbidden", "\(line) -> \(answer.line)")
            }
            #expect(server.store.memberships(visibleTo: .user("u1")).isEmpty)
        }
    }

    @Test func anAdminTokenRunsEverythingAndItsChangesAreAttributedToItsName() async throws {
        try await Self.withAuthenticatingServer { server in
            let connection = try await server.connect()
            #expect(try await connection.send(line: #"{"op":"auth","token":"\#(Self.adminToken)"}"#)["name"] == .string("billing"))
            #expect(try await connection.send(line: #"{"op":"grant","user":"u1","product":"p","reason":"support ticket 12"}"#).isOK)
            let history = try await connection.send(line: #"{"op":"history","user":"u1"}"#)
            let entry = try #require(history["history"]?.arrayValue?.first)
            #expect(entry["actor"] == .string("billing"))
            #expect(entry["reason"] == .string("support ticket 12"))
        }
    }

    @Test func aWrongTokenIsUnauthorizedTakesAwayTheRoleAndTheThirdInARowClosesTheConnection() async throws {
        try await Self.withAuthenticatingServer { server in
            let connection = try await server.connect()
            #expect(try await connection.send(line: #"{"op":"auth","token":"\#(Self.adminToken)"}"#).isOK)
            #expect(try await connection.send(line: #"{"op":"auth","token":"not-a-token-of-the-file"}"#).errorCode == "unauthorized")
            // The admin role is gone with the failed attempt.
            #expect(try await connection.send(line: #"{"op":"check","user":"u1"}"#).errorCode == "unauthorized")
            #expect(try await connection.send(line: #"{"op":"auth","token":"\#(Self.adminToken)x"}"#).errorCode == "unauthorized")
            let third = try await connection.send(line: #"{"op":"auth","token":"\#(String(Self.adminToken.dropLast()))"}"#)
            #expect(third.errorCode == "unauthorized")
            #expect(third.error?.message.contains("closed") == true)
            await #expect(throws: EntitledClientError.self) { _ = try await connection.send(line: #"{"op":"ping"}"#) }
            // Successes in between do not reset the count: a check token cannot interleave guesses at an
            // admin token without end.
            let other = try await server.connect()
            for _ in 0..<2 {
                #expect(try await other.send(line: #"{"op":"auth","token":"wrong-wrong-wrong-wrong"}"#).errorCode == "unauthorized")
                #expect(try await other.send(line: #"{"op":"auth","token":"\#(Self.checkToken)"}"#).isOK)
            }
            #expect(try await other.send(line: #"{"op":"auth","token":"wrong-wrong-wrong-wrong"}"#).errorCode == "unauthorized")
            await #expect(throws: EntitledClientError.self) { _ = try await other.send(line: #"{"op":"ping"}"#) }
        }
    }

    @Test func aFailedAuthEndsTheConnectionsWatches() async throws {
        try await Self.withAuthenticatingServer { server in
            let connection = try await server.connect()
            #expect(try await connection.send(line: #"{"op":"auth","token":"\#(Self.checkToken)"}"#).isOK)
            #expect(try await connection.send(line: #"{"op":"watch","user":"alice"}"#)["watches"] == .number("1"))
            #expect(try await connection.send(line: #"{"op":"auth","token":"not-a-token-of-the-file"}"#).errorCode == "unauthorized")
            #expect(try await connection.send(line: #"{"op":"auth","token":"\#(Self.checkToken)"}"#).isOK)
            #expect(try await connection.send(line: #"{"op":"unwatch"}"#)["watches"] == .number("0"))
        }
    }

    @Test func aWriterTokenGrantsClaimsRevokesAndAppliesEventsButNeverErasesChangesTheCatalogOrReadsTheTrail() async throws {
        try await Self.withAuthenticatingServer { server in
            let admin = try await server.connect()
            #expect(try await admin.send(line: #"{"op":"auth","token":"\#(Self.adminToken)"}"#).isOK)
            #expect(try await admin.send(line: #"{"op":"define","entitlement":"pro","products":["prod_pro"]}"#).isOK)
            let writer = try await server.connect()
            let authenticated = try await writer.send(line: #"{"op":"auth","token":"\#(Self.writerToken)"}"#)
            #expect(authenticated["role"] == .string("writer"))
            let granted = try await writer.send(line: #"{"op":"grant","device":"d1","product":"prod_pro","duration":"30d","transactionId":"T1"}"#)
            #expect(granted.isOK, "\(granted.line)")
            let id = try #require(granted.membership?.id)
            #expect(try await writer.send(line: #"{"op":"claim","device":"d1","user":"alice"}"#).isOK)
            let now = server.store.now().rfc3339
            let event = try await writer.send(line: #"{"op":"event","membership":"\#(id)","type":"cancellation","eventId":"e1","eventTime":"\#(now)"}"#)
            #expect(event.isOK, "\(event.line)")
            #expect(try await writer.send(line: #"{"op":"memberships","transactionId":"T1"}"#).isOK)
            #expect(try await writer.send(line: #"{"op":"check","user":"alice","entitlement":"pro"}"#)["active"] == .bool(true))
            #expect(try await writer.send(line: #"{"op":"revoke","membership":"\#(id)","reason":"refund"}"#).isOK)
            for line in [
                #"{"op":"erase","user":"alice"}"#, #"{"op":"define","entitlement":"pro","products":["prod_x"]}"#,
                #"{"op":"undefine","entitlement":"pro"}"#, #"{"op":"history","user":"alice"}"#, #"{"op":"reload"}"#,
                #"{"op":"snapshot"}"#, #"{"op":"stats"}"#, #"{"op":"extend","membership":"\#(id)","duration":"1d"}"#,
                #"{"op":"watch","all":true}"#,
            ] {
                let answer = try await writer.send(line: line)
                #expect(answer.errorCode == "forbidden", "\(line) -> \(answer.line)")
            }
            // Its changes carry its name.
            let trail = try await admin.send(line: #"{"op":"history","user":"alice"}"#)
            #expect(trail.line.contains(#""actor":"stores""#), "\(trail.line)")
        }
    }

    @Test func aCheckTokenWatchesGivenSubjectsButNotEverySubject() async throws {
        try await Self.withAuthenticatingServer { server in
            let connection = try await server.connect()
            #expect(try await connection.send(line: #"{"op":"auth","token":"\#(Self.checkToken)"}"#).isOK)
            let refused = try await connection.send(line: #"{"op":"watch","all":true}"#)
            #expect(refused.errorCode == "forbidden")
            #expect(refused.error?.message.contains("admin") == true)
            #expect(try await connection.send(line: #"{"op":"watch","user":"alice"}"#)["watches"] == .number("1"))
            let admin = try await server.connect()
            #expect(try await admin.send(line: #"{"op":"auth","token":"\#(Self.adminToken)"}"#).isOK)
            #expect(try await admin.send(line: #"{"op":"watch","all":true}"#)["watches"] == .number("1"))
            // Bob's grant reaches the admin's watch of everyone, not the check token's watch of alice.
            #expect(try await admin.send(line: #"{"op":"grant","user":"bob","product":"prod_pro"}"#).isOK)
            #expect(await admin.nextPush(within: .seconds(30))?.membership?.user == "bob")
            #expect(try await connection.send(line: #"{"op":"ping"}"#).isOK)
            #expect(await connection.nextPush(within: .milliseconds(200)) == nil)
        }
    }

    @Test func aCheckTokenListsWhomItNamesButNotEveryMembershipOfASource() async throws {
        try await Self.withAuthenticatingServer { server in
            let writer = try await server.connect()
            #expect(try await writer.send(line: #"{"op":"auth","token":"\#(Self.writerToken)"}"#).isOK)
            #expect(try await writer.send(line: #"{"op":"grant","user":"alice","product":"prod_pro","source":"stripe"}"#).isOK)
            let listed = try await writer.send(line: #"{"op":"memberships","source":"stripe"}"#)
            #expect(listed["memberships"]?.arrayValue?.count == 1)
            let check = try await server.connect()
            #expect(try await check.send(line: #"{"op":"auth","token":"\#(Self.checkToken)"}"#).isOK)
            let refused = try await check.send(line: #"{"op":"memberships","source":"stripe"}"#)
            #expect(refused.errorCode == "forbidden")
            #expect(refused.error?.message.contains("writer or admin") == true)
            #expect(try await check.send(line: #"{"op":"memberships","user":"alice"}"#)["memberships"]?.arrayValue?.count == 1)
        }
    }

    @Test func anAdminsWatchOfEverySubjectEndsWhenTheConnectionTurnsToACheckToken() async throws {
        try await Self.withAuthenticatingServer { server in
            let connection = try await server.connect()
            #expect(try await connection.send(line: #"{"op":"auth","token":"\#(Self.adminToken)"}"#).isOK)
            #expect(try await connection.send(line: #"{"op":"watch","all":true}"#)["watches"] == .number("1"))
            #expect(try await connection.send(line: #"{"op":"watch","user":"alice"}"#)["watches"] == .number("2"))
            #expect(try await connection.send(line: #"{"op":"auth","token":"\#(Self.checkToken)"}"#).isOK)
            // The watch of alice stays; the watch of everyone went with the admin role.
            #expect(try await connection.send(line: #"{"op":"unwatch","user":"alice"}"#)["watches"] == .number("0"))
        }
    }

    @Test func everyAnswerOfABatchTheServerStoppedReadingArrivesBeforeTheClosingAnswerClosesTheConnection() async throws {
        // Listings of about 30 KB, four a turn, for a client that reads nothing until it has sent
        // everything: the server stops reading with lines still unanswered, and answers the rest, the
        // closing third failed auth last, once the client reads. Every answer must arrive before the close.
        let tokens = try Self.tokens()
        try await withTestServer(configure: { $0.accessTokens = tokens; $0.maximumRequestsPerTurn = 4 }) { server in
            let admin = try await server.connect()
            #expect(try await admin.send(line: #"{"op":"auth","token":"\#(Self.adminToken)"}"#).isOK)
            for index in 0..<100 {
                #expect(try await admin.send(line: #"{"op":"grant","user":"big","product":"prod_\#(index)"}"#).isOK)
            }
            let port = server.port
            let lines = try await onDedicatedThread { () -> [String] in
                let socket = try RawSocket(port: port, receiveBufferSize: 4096)
                let bad = #"{"op":"auth","token":"not-a-token-of-the-file"}"#
                let listing = #"{"op":"memberships","user":"big"}"#
                let requests = [#"{"op":"auth","token":"\#(Self.adminToken)"}"#] + Array(repeating: listing, count: 8) + [bad, bad, bad]
                try socket.send(requests.joined(separator: "\n") + "\n")
                usleep(300_000)
                var lines: [String] = []
                while let line = try socket.readLine() { lines.append(line) }
                return lines
            }
            #expect(lines.count == 12)
            #expect(lines.dropFirst().prefix(8).allSatisfy { $0.hasPrefix(#"{"ok":true,"memberships":["#) })
            #expect(lines.last?.contains("the connection will be closed") == true)
        }
    }

    @Test func theTokenIsNeverInAnAnswerOrALogLine() async throws {
        let logs = RecordedLogs()
        let secretAttempt = "attempt-with-a-secret-value"
        try await Self.withAuthenticatingServer(logs: logs) { server in
            let connection = try await server.connect()
            var answers: [String] = []
            for line in [
                #"{"op":"auth","token":"\#(secretAttempt)"}"#,
                #"{"op":"auth","token":"\#(secretAttempt)\#(String(repeating: "z", count: 2000))"}"#,
                #"{"op":"auth","token":"\#(Self.adminToken)"}"#,
            ] {
                answers.append(try await connection.send(line: line).line)
            }
            #expect(answers[0].contains("unauthorized"))
            #expect(answers[1].contains("bad_request"))
            for text in answers + logs.all {
                #expect(!text.contains(secretAttempt) && !text.contains(Self.adminToken), "\(text)")
            }
            #expect(logs.all.contains { $0.contains("authentication failed") && $0.contains("peer=127.0.0.1:") })
        }
    }

    @Test func withoutAuthenticationAuthIsAcceptedAsTheLocalAdministrator() async throws {
        try await withTestServer { server in
            let connection = try await server.connect()
            #expect(try await connection.send(line: #"{"op":"hello"}"#)["authRequired"] == .bool(false))
            #expect(try await connection.send(line: #"{"op":"auth","token":"anything-at-all"}"#).line == #"{"ok":true,"name":"local","role":"admin","authRequired":false}"#)
            #expect(try await connection.send(line: #"{"op":"grant","user":"u1","product":"p"}"#).isOK)
        }
    }

    @Test func theClientLibraryAuthenticatesWithItsTokenAndReportsARefusedOne() async throws {
        try await Self.withAuthenticatingServer { server in
            let address = ServerAddress.tcp(host: "127.0.0.1", port: server.port)
            let connection = try await EntitledAsyncConnection.connect(to: address, token: Self.adminToken)
            #expect(try await connection.send(.grant(user: "u1", product: "p")).isOK)
            await #expect(throws: EntitledClientError.self) {
                _ = try await EntitledAsyncConnection.connect(to: address, token: "nobody-has-this-token")
            }
        }
    }
}
