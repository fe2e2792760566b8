import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// The receiver's token on a server with `--auth`: when the server stops taking it the notifications are
/// answered 503 (the store delivers them again), and once it is taken again the next delivery applies,
/// under steady traffic too (not only after the connection happens to close).
@Suite struct ReceiverTokenTests {
    @Test func aRemovedThenRestoredTokenIsUsedAgainAtTheNextNotification() throws {
        let entitled = try RunningEntitled(tokens: [.admin, .writer, .check])
        let authFile = try #require(entitled.authFilePath)
        let files = try TemporaryDirectory()
        let tokenFile = files.path + "/stores.token"
        try (AuthFileEntry.writer.token + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let stores = try RunningStores(
            entitled: "127.0.0.1:\(entitled.port)", environment: ["ENTITLED_STORES_STRIPE_SECRET": StripeFixtures.secret],
            arguments: ["--token-file", tokenFile]
        )
        func deliver(_ id: String, _ offset: Int64) throws -> HTTPReply {
            let body = StripeFixtures.subscriptionEvent(id, created: StripeFixtures.now - 100 + offset, periodEnd: StripeFixtures.now + 86_400 * (1 + offset))
            return try stores.post("/stripe", body: body, headers: StripeFixtures.signed(body))
        }
        #expect(try deliver("evt_1", 0).status == 200)

        // The receiver's token is removed from the server's auth file.
        try AuthFileEntry.writeAuthFile([.check], to: authFile)
        entitled.reload()
        // Generous deadlines here and below: the server and the receiver may be slow to get their turns on
        // a machine busy with the whole suite.
        let refused = try eventually(30) { try deliver("evt_2", 1).status == 503 }
        #expect(refused, "the receiver's notifications were still applied after its token was removed")

        // Restored: the next deliveries apply, though notifications kept coming all along.
        try AuthFileEntry.writeAuthFile([.admin, .writer, .check], to: authFile)
        entitled.reload()
        let applied = try eventually(30) { try deliver("evt_2", 1).status == 200 }
        #expect(applied, "the restored token was not used again")
    }

    /// Polls every 0.1 s for up to `seconds`.
    private func eventually(_ seconds: Double, _ condition: () throws -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return try condition()
    }
}
