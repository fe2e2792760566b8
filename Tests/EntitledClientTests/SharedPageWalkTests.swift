import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// The three kinds of connection walk pages with the one `PageWalk`: each test runs the same body on the
/// blocking `EntitledConnection`, the `EntitledAsyncConnection` and the `EntitledPool`.
@Suite struct SharedPageWalkTests {
    /// A kind of connection, and a listing on a new one of that kind.
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case blockingConnection, asyncConnection, pool

        var testDescription: String { rawValue }

        /// `blocking` on a new `EntitledConnection` (on a thread of its own, since it blocks), or `async`
        /// on a new `EntitledAsyncConnection` or `EntitledPool`, to `address`; the connection is closed after.
        func list<Listing: Sendable>(
            at address: ServerAddress, blocking: @escaping @Sendable (EntitledConnection) throws -> Listing,
            async: (any EntitledAsyncSender) async throws -> Listing
        ) async throws -> Listing {
            switch self {
            case .blockingConnection:
                let result = await withCheckedContinuation { continuation in
                    Thread.detachNewThread { continuation.resume(returning: Result { try blocking(EntitledConnection(address: address)) }) }
                }
                return try result.get()
            case .asyncConnection:
                let connection = try await EntitledAsyncConnection.connect(to: address)
                return try await Self.list(on: connection, async) { await connection.close() }
            case .pool:
                let pool = EntitledPool(address: address)
                return try await Self.list(on: pool, async) { await pool.close() }
            }
        }

        /// `body(sender)`, then `close()`, whether it threw or not.
        private static func list<Listing>(
            on sender: any EntitledAsyncSender, _ body: (any EntitledAsyncSender) async throws -> Listing, close: () async -> Void
        ) async throws -> Listing {
            do {
                let listing = try await body(sender)
                await close()
                return listing
            } catch {
                await close()
                throw error
            }
        }
    }

    @Test(arguments: Kind.allCases)
    func everyKindWalksTheRealServersPagesListingEachItemOnceInOrder(_ kind: Kind) async throws {
        let server = try RunningEntitled(arguments: ["--fsync", "no"])
        let address = ServerAddress.tcp(host: "127.0.0.1", port: server.port)
        let setup = try await EntitledAsyncConnection.connect(to: address)
        for index in 0..<25 { #expect(try await setup.send(.grant(user: "u1", product: "prod_\(index)")).isOK) }
        for user in ["gone_1", "gone_2", "gone_3"] {
            #expect(try await setup.send(.grant(user: user, product: "prod")).isOK)
            #expect(try await setup.send(.erase(user: user, reason: "test")).isOK)
        }
        // One request each holds the whole listing (fewer than 100 items): what the walks must put together.
        let memberships = try #require(try await setup.send(.memberships(user: "u1")).memberships)
        let trail = try #require(try await setup.send(.history(user: "u1")).history)
        let erasures = try #require(try await setup.send(.erasureHistory()).history)
        await setup.close()
        #expect(memberships.count == 25)
        #expect(Set(memberships.map(\.id)).count == 25)
        #expect(trail.count == 25)
        #expect(erasures.count == 3)

        let membershipPages = try await kind.list(at: address) { try $0.allPages(of: .memberships(user: "u1", limit: 7)) } async: {
            try await $0.allPages(of: .memberships(user: "u1", limit: 7))
        }
        #expect(membershipPages.map { $0.memberships?.count } == [7, 7, 7, 4])
        #expect(membershipPages.flatMap { $0.memberships ?? [] } == memberships)
        #expect(try await kind.list(at: address) { try $0.allMemberships(user: "u1") } async: { try await $0.allMemberships(user: "u1") } == memberships)

        let historyPages = try await kind.list(at: address) { try $0.allPages(of: .history(user: "u1", limit: 10)) } async: {
            try await $0.allPages(of: .history(user: "u1", limit: 10))
        }
        #expect(historyPages.map { $0.history?.count } == [10, 10, 5])
        #expect(historyPages.flatMap { $0.history ?? [] } == trail)
        #expect(try await kind.list(at: address) { try $0.allHistory(user: "u1") } async: { try await $0.allHistory(user: "u1") } == trail)

        // The history cursors are the server's own strings, not membership ids: one erasure a page.
        let erasurePages = try await kind.list(at: address) { try $0.allPages(of: .erasureHistory(limit: 1)) } async: {
            try await $0.allPages(of: .erasureHistory(limit: 1))
        }
        #expect(erasurePages.map { $0.history?.count } == [1, 1, 1])
        #expect(erasurePages.flatMap { $0.history ?? [] } == erasures)
        #expect(try await kind.list(at: address) { try $0.allErasureHistory() } async: { try await $0.allErasureHistory() } == erasures)
    }

    @Test(arguments: Kind.allCases)
    func everyKindThrowsTheRefusalOfALaterPageRatherThanReturningTheFirst(_ kind: Kind) async throws {
        // The first page is answered, with a `next`; the page after it is refused, as `entitled` refuses an
        // `after` naming a membership erased since.
        let refusal = #"{"ok":false,"error":{"code":"bad_request","message":"\"after\" names no membership (mem_8)"}}"#
        let server = try FakeLineServer { line in
            guard !line.contains(#""after""#) else { return .line(refusal) }
            let page = [PagingTests.membership("mem_9"), PagingTests.membership("mem_8")].joined(separator: ",")
            return .line(#"{"ok":true,"memberships":[\#(page)],"next":"mem_8"}"#)
        }
        let address = ServerAddress.tcp(host: "127.0.0.1", port: server.port)
        do {
            let listed = try await kind.list(at: address) { try $0.allMemberships(user: "u1") } async: { try await $0.allMemberships(user: "u1") }
            Issue.record("expected the second page's bad_request, got \(listed.count) memberships")
        } catch let error as EntitledClientError {
            guard case .server(let failure) = error else {
                Issue.record("expected .server, got \(error)")
                return
            }
            #expect(failure.code == .badRequest)
            #expect(failure.message == #""after" names no membership (mem_8)"#)
        }
        // Both pages were asked for, each once: the refusal is not sent again.
        #expect(
            server.receivedLines == [
                #"{"op":"memberships","user":"u1","limit":1000}"#, #"{"op":"memberships","user":"u1","limit":1000,"after":"mem_8"}"#,
            ]
        )
    }
}
