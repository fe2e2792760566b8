import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `extend` against a real `entitled` process: what it answers and refuses, that it is an admin's
/// operation, that watchers hear of it, and that it survives a kill -9 with its audit entry.
@Suite struct ExtendOperationTests {
    static func connect(_ server: RunningEntitled) async throws -> EntitledAsyncConnection {
        try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: server.port), timeout: .seconds(60))
    }

    @Test func anExtensionAnswersTheNewAndThePreviousExpiryAndSurvivesAKill() async throws {
        let server = try RunningEntitled()
        let connection = try await Self.connect(server)
        let granted = try await connection.send(.grant(user: "alice", product: "prod_pro", expiresAt: "2031-01-31T10:00:00Z"))
        let id = try #require(granted.membership?.id)
        let extended = try await connection.send(.extend(membership: id, duration: "1mo", reason: "outage"))
        #expect(extended.isOK, "\(extended.line)")
        #expect(extended.membership?.expiresAt == "2031-02-28T10:00:00Z")
        #expect(extended.previousExpiresAt == "2031-01-31T10:00:00Z")
        #expect(extended.sequence == 2)
        let until = try await connection.send(.extend(membership: id, expiresAt: "2031-12-24T00:00:00Z"))
        #expect(until.membership?.expiresAt == "2031-12-24T00:00:00Z")
        #expect(until.previousExpiresAt == "2031-02-28T10:00:00Z")
        await connection.close()

        server.kill()
        try server.restart()
        let after = try await Self.connect(server)
        let check = try await after.send(.check(user: "alice", product: "prod_pro"))
        #expect(check["expiresAt"]?.stringValue == "2031-12-24T00:00:00Z")
        let trail = try await after.send(.history(user: "alice")).history ?? []
        #expect(trail.map(\.action) == ["extend", "extend", "grant"])
        #expect(trail.map(\.previousExpiresAt) == ["2031-02-28T10:00:00Z", "2031-01-31T10:00:00Z", nil])
        #expect(trail.map(\.membership?.expiresAt) == ["2031-12-24T00:00:00Z", "2031-02-28T10:00:00Z", "2031-01-31T10:00:00Z"])
        #expect(trail[1].reason == "outage")
        await after.close()
    }

    @Test func whatCannotBeExtendedIsRefusedWithItsReasonAndChangesNothing() async throws {
        let server = try RunningEntitled()
        let connection = try await Self.connect(server)
        let dated = try #require(try await connection.send(.grant(user: "bob", product: "prod_pro", duration: "30d")).membership?.id)
        let lifetime = try #require(try await connection.send(.grant(user: "bob", product: "prod_life")).membership?.id)
        let refunded = try #require(try await connection.send(.grant(user: "bob", product: "prod_pro", duration: "30d")).membership?.id)
        _ = try await connection.send(.revoke(membership: refunded, reason: "refund"))
        let refusals: [(line: String, code: String, says: String)] = [
            (#"{"op":"extend","membership":"\#(lifetime)","duration":"7d"}"#, "conflict", "never expires"),
            (#"{"op":"extend","membership":"\#(refunded)","duration":"7d"}"#, "conflict", "was revoked (refund"),
            (#"{"op":"extend","membership":"mem_0000000000000","duration":"7d"}"#, "not_found", "no membership has the id"),
            (#"{"op":"extend","membership":"\#(dated)","expiresAt":"2020-01-01T00:00:00Z"}"#, "bad_request", "is not later than the expiry"),
            (#"{"op":"extend","membership":"\#(dated)","duration":"1m"}"#, "bad_request", #""1min" for minutes or "1mo""#),
            (#"{"op":"extend","membership":"\#(dated)","duration":"7d","expiresAt":"2031-01-01T00:00:00Z"}"#, "bad_request", "not both"),
            (#"{"op":"extend","membership":"\#(dated)"}"#, "bad_request", #"extend needs "duration""#),
            (#"{"op":"extend","duration":"7d"}"#, "bad_request", #"field "membership" is required for extend"#),
            (#"{"op":"extend","membership":"\#(dated)","duration":"7d","user":"bob"}"#, "bad_request", #"field "user" is not used by extend"#),
        ]
        for refusal in refusals {
            let answer = try await connection.send(line: refusal.line)
            #expect(answer.error?.code.rawValue == refusal.code, "\(refusal.line) -> \(answer.line)")
            #expect(answer.error?.message.contains(refusal.says) == true, "\(refusal.line) -> \(answer.line)")
        }
        // Nothing was recorded: the newest change is still the revoke (4).
        #expect(try await connection.send(.claim(device: "nobody", user: "bob")).sequence == 4)
        await connection.close()
    }

    @Test func onlyAnAdminMayExtend() async throws {
        // No authentication deadline: this test awaits between connecting and `auth`, and a loaded runner has
        // held such a task for longer than the default 30 s (as TokenReloadTests found).
        let server = try RunningEntitled(
            tokens: [
                AuthFileEntry(name: "support", token: "support-token-0123456789", role: "admin"),
                AuthFileEntry(name: "api", token: "api-token-0123456789abcdef", role: "check"),
            ],
            arguments: ["--auth-timeout", "0"]
        )
        let admin = try await Self.connect(server)
        #expect(try await admin.send(.auth(token: "support-token-0123456789")).isOK)
        let id = try #require(try await admin.send(.grant(user: "carol", product: "prod_pro", duration: "1d")).membership?.id)
        let api = try await Self.connect(server)
        #expect(try await api.send(.auth(token: "api-token-0123456789abcdef")).isOK)
        #expect(try await api.send(.extend(membership: id, duration: "1d")).error?.code == .forbidden)
        #expect(try await admin.send(.extend(membership: id, duration: "1d", reason: "ticket 12")).isOK)
        // The trail names the token's owner.
        #expect(try await admin.send(.history(user: "carol")).history?.first?.actor == "support")
        await api.close()
        await admin.close()
    }

    @Test func aWatcherIsToldOfAnExtensionAndOfAccessItGivesBack() async throws {
        let server = try RunningEntitled()
        let watcher = try await Self.connect(server)
        #expect(try await watcher.send(.watch(user: "dave")).isOK)
        let writer = try await Self.connect(server)
        let lapsed = try #require(
            try await writer.send(.grant(user: "dave", product: "prod_pro", expiresAt: "2020-01-01T00:00:00Z")).membership?.id
        )
        let extended = try await writer.send(.extend(membership: lapsed, duration: "7d"))
        #expect(extended.membership?.status == "active")
        var pushes: [EntitledPush] = []
        while pushes.count < 2, let push = await watcher.nextPush(within: .seconds(30)) { pushes.append(push) }
        #expect(pushes.map(\.cause) == ["grant", "extend"])
        #expect(pushes.last?.membership?.status == "active")
        #expect(pushes.last?.membership?.expiresAt == extended.membership?.expiresAt)
        #expect(pushes.last?["sequence"]?.intValue == extended.sequence.map(Int.init))
        await watcher.close()
        await writer.close()
    }
}
