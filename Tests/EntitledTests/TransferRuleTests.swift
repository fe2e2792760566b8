import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `--transfer-rule`, against real `entitled` processes: a purchase reported for a second user moves to
/// them by default and survives a kill -9; with `keep` it stays with its owner and the grant is refused.
@Suite struct TransferRuleTests {
    static func connect(_ server: RunningEntitled) async throws -> EntitledAsyncConnection {
        try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: server.port), timeout: .seconds(60))
    }

    static func purchase(_ user: String, transaction: String, on connection: EntitledAsyncConnection) async throws -> EntitledResponse {
        try await connection.send(.grant(user: user, product: "prod_pro", duration: "30d", transactionId: transaction), timeout: .seconds(60))
    }

    @Test func byDefaultARestoredPurchaseMovesToTheNewUserAndStaysMovedAfterAKill() async throws {
        let server = try RunningEntitled()
        let connection = try await Self.connect(server)
        let first = try await Self.purchase("alice", transaction: "1000", on: connection)
        let moved = try await Self.purchase("bob", transaction: "1000", on: connection)
        #expect(moved.isOK)
        #expect(moved.membership?.id == first.membership?.id)
        #expect(moved.transferredFrom?.user == "alice")
        await connection.close()

        server.kill()
        try server.restart()
        let after = try await Self.connect(server)
        #expect(try await after.send(.check(user: "bob", product: "prod_pro"), timeout: .seconds(60)).body["active"]?.boolValue == true)
        #expect(try await after.send(.check(user: "alice", product: "prod_pro"), timeout: .seconds(60)).body["active"]?.boolValue == false)
        let trail = try await after.send(.history(user: "alice"), timeout: .seconds(60)).history ?? []
        #expect(trail.map(\.action) == ["transfer", "grant"])
        await after.close()
    }

    @Test func withKeepTheGrantIsRefusedAndThePurchaseStaysWithItsOwner() async throws {
        let server = try RunningEntitled(arguments: ["--transfer-rule", "keep"])
        let connection = try await Self.connect(server)
        let first = try await Self.purchase("alice", transaction: "1000", on: connection)
        let refused = try await Self.purchase("bob", transaction: "1000", on: connection)
        #expect(refused.error?.code == .conflict)
        #expect(
            refused.error?.message
                == "the purchase with originalTransactionId \"1000\" belongs to membership \(first.membership?.id ?? "?") of another user, and the server's transfer rule is \"keep\": it stays there"
        )
        #expect(try await connection.send(.check(user: "alice"), timeout: .seconds(60)).body["active"]?.boolValue == true)
        #expect(try await connection.send(.check(user: "bob"), timeout: .seconds(60)).body["active"]?.boolValue == false)
        // The same owner reporting it again is no conflict: nothing new, answered as a replay.
        let again = try await Self.purchase("alice", transaction: "1000", on: connection)
        #expect(again.isIdempotentReplay)
        await connection.close()
    }

    @Test func anUnknownRuleIsRefusedAtStart() throws {
        #expect(throws: (any Error).self) { try RunningEntitled(arguments: ["--transfer-rule", "newest"]) }
    }
}
