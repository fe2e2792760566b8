import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `entitled-stores reconcile` with the App Store after a refund: the App Store Server API's stand-in lists
/// a period paid after the refund whose notification was missed.
extension AppleReconciliationTests {
    @Test func aPeriodPaidAfterARefundThatNoNotificationReportedIsGrantedByTheReconciliation() async throws {
        let now = Self.now, day = Self.day
        let user = StoreSyncHarness.appleUser(10)
        try subscribe("7700000001", user: 10, purchased: now - 10 * day, expires: now + 20 * day)
        let first = transaction("7700000001", "7700000001", user: 10, purchased: now - 10 * day, expires: now + 20 * day, revoked: now - day)
        let refund = sync.appleNotification("REFUND", uuid: "rec-refund", signedDate: now - day, transaction: first)
        #expect(try stores.post("/apple", body: refund).body == "applied\n")
        // The customer subscribed again an hour ago; its SUBSCRIBED/RESUBSCRIBE never arrived.
        let again = transaction("7700000002", "7700000001", user: 10, purchased: now - 3_600_000, expires: now + 30 * day)
        try sync.setApple(original: "7700000001", transactions: [first, again], status: 1)

        let run = try await sync.run("reconcile")
        #expect(run.status == 0, "\(run.output)")
        let memberships = try sync.memberships(user)
        #expect(memberships.count == 2)
        let paid = try #require(memberships.first { $0.revokedAt == nil })
        #expect(paid.isActive && paid.willRenew)
        #expect(paid.transactions.map(\.id) == ["7700000002"])
        #expect(memberships.contains { $0.status == "revoked" && $0.transactions.first?.id == "7700000001" })
        // Its renewal's notification finds the membership the reconciliation granted.
        let renewal = transaction("7700000003", "7700000001", user: 10, purchased: now - 60_000, expires: now + 60 * day)
        #expect(try stores.post("/apple", body: sync.appleNotification("DID_RENEW", uuid: "rec-renew", signedDate: now - 60_000, transaction: renewal)).body == "applied\n")
        let renewed = try #require(try sync.memberships(user).first { $0.id == paid.id })
        #expect(renewed.renewsCount == 1)
        #expect(renewed.expiresAt.flatMap(ProtocolTime.milliseconds) == now + 60 * day)
        #expect(renewed.transactions.first?.originalTransactionId == "7700000001~2")

        // The next run asks Apple about the new membership by the subscription's own original transaction
        // (Apple knows no `~2`), and finds it as the App Store says.
        try sync.setApple(original: "7700000001", transactions: [first, again, renewal], status: 1)
        let next = try await sync.run("reconcile")
        #expect(next.status == 0, "\(next.output)")
        #expect(!next.output.contains("failed 1") && !next.output.contains("not_found"), "\(next.output)")
        #expect(try sync.memberships(user).first { $0.id == paid.id }?.isActive == true)
    }
}
