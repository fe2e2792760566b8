import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// What `entitled-stores` needs of the server to import a store's subscribers and reconcile with the store
/// every day, against a real `entitled` process: grants dated at the purchase with the renewals made before
/// (`purchasedAt`, `renewsCount`), kept through restarts from the log and from a snapshot; and a source's
/// memberships a page at a time (`memberships` with `source`, `endedAfter`, `after` a position).
@Suite struct ImportAndReconciliationOverTCPTests {
    static func connect(_ server: RunningEntitled) async throws -> EntitledAsyncConnection {
        try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: server.port), timeout: .seconds(60))
    }

    static let purchase = "2024-03-01T10:00:00Z"

    /// Everything an import decided, as the server answers it: the membership, the past around its purchase,
    /// and its trail entry.
    static func expectImported(on connection: EntitledAsyncConnection, stage: String) async throws {
        for user in ["alice", "bob"] {
            let listed = try #require(try await connection.send(.memberships(user: user)).memberships?.first, "\(stage)")
            #expect(listed.createdAt == purchase, "\(stage)")
            #expect(listed.expiresAt == "2024-04-01T10:00:00Z", "\(stage)")
            #expect(listed.renewsCount == 23, "\(stage)")
            #expect(listed.transactions.map(\.time) == [purchase], "\(stage)")
            #expect(listed.status == "expired", "\(stage)")
            #expect(try await connection.send(.check(user: user, at: "2024-03-15T00:00:00Z"))["active"]?.boolValue == true, "\(stage)")
            #expect(try await connection.send(.check(user: user, at: "2024-02-29T00:00:00Z"))["active"]?.boolValue == false, "\(stage)")
            let before = try await connection.send(.memberships(user: user, at: "2024-02-29T00:00:00Z"))
            #expect(before.memberships?.isEmpty == true, "\(stage): \(before.line)")
            let trail = try await connection.send(.history(user: user)).history ?? []
            #expect(trail.map(\.action) == ["grant"], "\(stage)")
            #expect(trail.map(\.time) == [purchase], "\(stage)")
        }
    }

    @Test func anImportedPurchaseKeepsItsDateAndRenewalsThroughRestartsFromTheLogAndFromASnapshot() async throws {
        let server = try RunningEntitled()
        let connection = try await Self.connect(server)
        // With a reason (the trail keeps a revision) and without (a plain grant keeps none): both dated alike.
        for (user, reason) in [("alice", "import" as String?), ("bob", nil)] {
            let granted = try await connection.send(
                .grant(
                    user: user, product: "prod_pro", source: "play_store", duration: "1mo", purchasedAt: "2024-03-01T11:00:00+01:00",
                    renewsCount: 23, transactionId: "GPA.3372-\(user)..23", reason: reason
                )
            )
            #expect(granted.isOK, "\(granted.line)")
            // Described as it is now: its month ended long ago.
            #expect(granted.membership?.status == "expired", "\(granted.line)")
            #expect(granted.membership?.createdAt == Self.purchase)
        }
        try await Self.expectImported(on: connection, stage: "live")
        await connection.close()

        server.kill()
        try server.restart()
        let fromTheLog = try await Self.connect(server)
        try await Self.expectImported(on: fromTheLog, stage: "after a kill, from the log")
        #expect(try await fromTheLog.send(line: #"{"op":"snapshot"}"#).isOK)
        await fromTheLog.close()

        server.kill()
        try server.restart()
        let fromTheSnapshot = try await Self.connect(server)
        try await Self.expectImported(on: fromTheSnapshot, stage: "after a kill, from the snapshot")
        await fromTheSnapshot.close()
        server.stop()
    }

    @Test func aPurchaseFromTheFutureOrAnInvalidImportIsRefusedAndChangesNothing() async throws {
        let server = try RunningEntitled()
        let connection = try await Self.connect(server)
        let refusals: [(line: String, says: String)] = [
            (#"{"op":"grant","user":"a","product":"p","purchasedAt":"2999-01-01T00:00:00Z"}"#, #"field "purchasedAt" 2999-01-01T00:00:00Z is more than 60 minutes ahead"#),
            (#"{"op":"grant","user":"a","product":"p","purchasedAt":"2024-02-30T00:00:00Z"}"#, #"field "purchasedAt" must be an RFC 3339 time"#),
            (#"{"op":"grant","user":"a","product":"p","renewsCount":100001}"#, #"field "renewsCount" must be from 0 to 100000"#),
            (#"{"op":"grant","user":"a","product":"p","renewsCount":"3"}"#, #"field "renewsCount" must be a whole number"#),
        ]
        for refusal in refusals {
            let answer = try await connection.send(line: refusal.line)
            #expect(answer.error?.code == .badRequest, "\(refusal.line) -> \(answer.line)")
            #expect(answer.error?.message.contains(refusal.says) == true, "\(refusal.line) -> \(answer.line)")
        }
        #expect(try await connection.send(.memberships(user: "a")).memberships?.isEmpty == true)
        await connection.close()
        server.stop()
    }

    /// Every page of `request`, following `next` to the end: the ids of each page.
    static func pages(of request: EntitledRequest, on connection: EntitledAsyncConnection) async throws -> [[String]] {
        var pages: [[String]] = []
        var next: EntitledRequest? = request
        while let asked = next {
            let answer = try await connection.send(asked)
            #expect(answer.isOK, "\(answer.line)")
            pages.append(try #require(answer.memberships, "\(answer.line)").map(\.id))
            next = answer.next.map { asked.page(after: $0) }
        }
        return pages
    }

    @Test func aSourcesMembershipsAreListedOldestFirstAPageAtATimeAcrossARestart() async throws {
        let server = try RunningEntitled()
        let connection = try await Self.connect(server)
        func grant(_ user: String, source: String, expiresAt: String? = nil) async throws -> String {
            try #require(try await connection.send(.grant(user: user, product: "prod_pro", source: source, expiresAt: expiresAt)).membership?.id)
        }
        var apple: [String] = []
        for index in 0..<5 { apple.append(try await grant("u\(index)", source: "app_store")) }
        _ = try await grant("web", source: "stripe")
        let endedLongAgo = try await grant("old", source: "app_store", expiresAt: "2020-01-01T00:00:00Z")
        let later = try await grant("late", source: "app_store", expiresAt: "2031-01-01T00:00:00Z")

        let every = try await Self.pages(of: .memberships(source: "app_store", limit: 2), on: connection)
        #expect(every == [[apple[0], apple[1]], [apple[2], apple[3]], [apple[4], endedLongAgo], [later]])
        let recent = try await Self.pages(of: .memberships(source: "app_store", endedAfter: "2025-01-01T00:00:00Z", limit: 10), on: connection)
        #expect(recent.flatMap { $0 } == apple + [later])

        // A cursor taken before a restart goes on after the last membership its page looked at.
        let first = try await connection.send(.memberships(source: "app_store", limit: 2))
        let cursor = try #require(first.next)
        _ = try await connection.send(.erase(user: "u3"))
        await connection.close()
        server.kill()
        try server.restart()
        let after = try await Self.connect(server)
        let rest = try await Self.pages(of: .memberships(source: "app_store", limit: 2, after: cursor), on: after)
        #expect(rest.flatMap { $0 } == [apple[2], apple[4], endedLongAgo, later])

        // Refusals name the field.
        for (line, says) in [
            (#"{"op":"memberships","source":"app_store","after":"mem_0k3n5q8r2t4v6"}"#, #"field "after" is not a position"#),
            (#"{"op":"memberships","source":"app_store","user":"u1"}"#, #"memberships takes one of"#),
            (#"{"op":"memberships","user":"u1","endedAfter":"2025-01-01T00:00:00Z"}"#, #"field "endedAfter" goes with "source""#),
            (#"{"op":"memberships","source":"app_store","after":"1.99.mem_0k3n5q8r2t4v6"}"#, #""after" (1.99.mem_0k3n5q8r2t4v6) is not a position this server can go on from"#),
        ] {
            let answer = try await after.send(line: line)
            #expect(answer.error?.code == .badRequest, "\(line) -> \(answer.line)")
            #expect(answer.error?.message.contains(says) == true, "\(line) -> \(answer.line)")
        }
        await after.close()
        server.stop()
    }
}
