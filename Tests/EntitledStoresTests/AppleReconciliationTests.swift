import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `entitled-stores reconcile` with the App Store: memberships made by notifications through a real
/// receiver, the App Store Server API's stand-in then telling what the missed notifications would have
/// (a renewal, an expiry, a refund, billing retry and grace, auto-renewal turned off); each is applied as
/// the lifecycle event it means, with the reason `reconciliation`, once.
// One test at a time: each runs entitled, entitled-stores and stand-ins, and the suites' tests all at once
// starved the rest of the full run (timing tests elsewhere ran out of time).
@Suite(.serialized) struct AppleReconciliationTests {
    let sync: StoreSyncHarness
    let stores: RunningStores
    static let now = StoreSyncHarness.now
    static let day = StoreSyncHarness.day

    init() throws {
        sync = try StoreSyncHarness([.apple])
        stores = try sync.receiver()
    }

    /// A subscription bought at `purchased` until `expires`, its SUBSCRIBED notification delivered.
    func subscribe(_ original: String, user: Int, purchased: Int64, expires: Int64) throws {
        let transaction = StoreSyncHarness.appleTransaction(original, original: original, purchased: purchased, expires: expires, token: StoreSyncHarness.appleUser(user))
        let body = sync.appleNotification(
            "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "sub-\(original)", signedDate: purchased, transaction: transaction,
            renewal: ["autoRenewStatus": 1, "autoRenewProductId": "premium.monthly"]
        )
        let reply = try stores.post("/apple", body: body)
        #expect(reply.body == "applied\n", "\(reply.status) \(reply.body)")
    }

    func transaction(_ id: String, _ original: String, user: Int, purchased: Int64, expires: Int64?, revoked: Int64? = nil) -> [String: Any] {
        StoreSyncHarness.appleTransaction(id, original: original, purchased: purchased, expires: expires, token: StoreSyncHarness.appleUser(user), revoked: revoked)
    }

    @Test func eachMissedChangeIsAppliedAsItsEventOnceWithTheReasonReconciliation() async throws {
        let now = Self.now, day = Self.day
        // 1: renewed 5 days ago, the DID_RENEW missed.
        try subscribe("1000000001", user: 1, purchased: now - 35 * day, expires: now - 5 * day)
        try sync.setApple(
            original: "1000000001",
            transactions: [
                transaction("1000000001", "1000000001", user: 1, purchased: now - 35 * day, expires: now - 5 * day),
                transaction("1000000002", "1000000001", user: 1, purchased: now - 5 * day, expires: now + 25 * day),
            ],
            status: 1
        )
        // 2: expired yesterday, renewal turned off before (neither notification came).
        try subscribe("2000000001", user: 2, purchased: now - 31 * day, expires: now - day)
        try sync.setApple(
            original: "2000000001", transactions: [transaction("2000000001", "2000000001", user: 2, purchased: now - 31 * day, expires: now - day)],
            status: 2, autoRenew: false
        )
        // 3: refunded 3 days ago.
        try subscribe("3000000001", user: 3, purchased: now - 10 * day, expires: now + 20 * day)
        try sync.setApple(
            original: "3000000001",
            transactions: [transaction("3000000001", "3000000001", user: 3, purchased: now - 10 * day, expires: now + 20 * day, revoked: now - 3 * day)],
            status: 5, autoRenew: false
        )
        // 4: in the billing grace period; 5: in billing retry, without grace.
        let graceEnd = now + 6 * day
        try subscribe("4000000001", user: 4, purchased: now - 30 * day, expires: now - 3_600_000)
        try sync.setApple(
            original: "4000000001", transactions: [transaction("4000000001", "4000000001", user: 4, purchased: now - 30 * day, expires: now - 3_600_000)],
            status: 4, renewal: ["gracePeriodExpiresDate": graceEnd]
        )
        try subscribe("4100000001", user: 5, purchased: now - 30 * day, expires: now - 3_600_000)
        try sync.setApple(
            original: "4100000001", transactions: [transaction("4100000001", "4100000001", user: 5, purchased: now - 30 * day, expires: now - 3_600_000)],
            status: 3
        )
        // 6: auto-renewal turned off; 7: nothing missed.
        try subscribe("5000000001", user: 6, purchased: now - 5 * day, expires: now + 25 * day)
        try sync.setApple(
            original: "5000000001", transactions: [transaction("5000000001", "5000000001", user: 6, purchased: now - 5 * day, expires: now + 25 * day)],
            status: 1, autoRenew: false
        )
        try subscribe("6000000001", user: 7, purchased: now - 5 * day, expires: now + 25 * day)
        try sync.setApple(
            original: "6000000001", transactions: [transaction("6000000001", "6000000001", user: 7, purchased: now - 5 * day, expires: now + 25 * day)],
            status: 1
        )
        // 8: upgraded at its renewal to the yearly product (same original transaction, another product).
        try subscribe("6500000001", user: 8, purchased: now - 35 * day, expires: now - 5 * day)
        var yearly = transaction("6500000002", "6500000001", user: 8, purchased: now - 5 * day, expires: now + 360 * day)
        yearly["productId"] = "premium.yearly"
        try sync.setApple(
            original: "6500000001", transactions: [transaction("6500000001", "6500000001", user: 8, purchased: now - 35 * day, expires: now - 5 * day), yearly],
            status: 1
        )
        // 9: a one-time purchase (no status), refunded yesterday.
        let lifetime = StoreSyncHarness.appleTransaction(
            "6600000001", original: "6600000001", purchased: now - 20 * day, expires: nil, product: "lifetime.unlock", token: StoreSyncHarness.appleUser(9)
        )
        #expect(try stores.post("/apple", body: sync.appleNotification("ONE_TIME_CHARGE", uuid: "otc-66", signedDate: now - 20 * day, transaction: lifetime)).body == "applied\n")
        var refundedLifetime = lifetime
        refundedLifetime["revocationDate"] = now - day
        refundedLifetime["revocationReason"] = 1
        try sync.setApple(original: "6600000001", transactions: [refundedLifetime], status: nil)

        let run = try await sync.run("reconcile")
        #expect(run.status == 0, "\(run.output)")
        #expect(
            run.output.contains("app_store: checked 9, corrected 8, failed 0 (billing_issue 2, cancellation 1, expiration 1, product_change 1, refund 2, renewal 2)"),
            "\(run.output)"
        )
        for (original, user, change) in [
            ("1000000001", 1, "renewal"), ("2000000001", 2, "expiration"), ("3000000001", 3, "refund"), ("4000000001", 4, "billing_issue"),
            ("4100000001", 5, "billing_issue"), ("5000000001", 6, "cancellation"), ("6500000001", 8, "product_change, renewal"), ("6600000001", 9, "refund"),
        ] {
            let membership = try sync.membership(original: original)
            #expect(run.output.contains("reconciled app_store membership \(membership.id) of \(StoreSyncHarness.appleUser(user)): \(change)"), "\(original): \(run.output)")
            let newest = try #require(try sync.history(StoreSyncHarness.appleUser(user)).first)
            #expect(newest.action == change.components(separatedBy: ", ").last && newest.reason == "reconciliation", "\(original): \(newest)")
        }
        #expect(!run.output.contains(try sync.membership(original: "6000000001").id), "the membership that agreed has no line: \(run.output)")

        let renewed = try sync.membership(original: "1000000001")
        #expect(renewed.isActive && renewed.renewsCount == 1 && renewed.willRenew)
        #expect(renewed.expiresAt.flatMap(ProtocolTime.milliseconds) == now + 25 * day)
        #expect(renewed.transactions.map(\.id) == ["1000000001", "1000000002"])
        let expired = try sync.membership(original: "2000000001")
        #expect(expired.status == "expired" && !expired.willRenew)
        let refunded = try sync.membership(original: "3000000001")
        #expect(refunded.status == "revoked" && refunded.revokedAt.flatMap(ProtocolTime.milliseconds) == now - 3 * day)
        let grace = try sync.membership(original: "4000000001")
        #expect(grace.renewState == "billing_issue" && grace.isActive)
        #expect(grace.gracePeriodExpiresAt.flatMap(ProtocolTime.milliseconds) == graceEnd)
        let retry = try sync.membership(original: "4100000001")
        #expect(retry.renewState == "billing_issue" && retry.gracePeriodExpiresAt == nil && !retry.isActive)
        let off = try sync.membership(original: "5000000001")
        #expect(!off.willRenew && off.isActive)
        let upgraded = try sync.membership(original: "6500000001")
        #expect(upgraded.productId == "premium.yearly" && upgraded.isActive && upgraded.expiresAt.flatMap(ProtocolTime.milliseconds) == now + 360 * day)
        let lifetimeRefunded = try sync.membership(original: "6600000001")
        #expect(lifetimeRefunded.status == "revoked" && lifetimeRefunded.revokedAt.flatMap(ProtocolTime.milliseconds) == now - day)
        // Two calls a subscription (its transactions, its status), one for the one-time purchase.
        #expect(try sync.apple?.traffic().requests == 17)

        // Nothing differs any more.
        let trails = try (1...9).map { try sync.history(StoreSyncHarness.appleUser($0)).count }
        let again = try await sync.run("reconcile")
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("app_store: checked 9, corrected 0, failed 0\n"), "\(again.output)")
        #expect(!again.output.contains("reconciled app_store membership"), "\(again.output)")
        #expect(try (1...9).map { try sync.history(StoreSyncHarness.appleUser($0)).count } == trails)
    }

    /// A missed renewal dated before a notification that did arrive (the renewal while the receiver was
    /// down, then the customer turned auto-renewal off): `entitled` orders events by time, so the renewal
    /// written at its purchase time would be ignored as out of order, and the membership would stay
    /// expired although the customer paid. So would a refund older than a later notification received.
    @Test func aMissedChangeOlderThanANotificationReceivedIsStillApplied() async throws {
        let now = Self.now, day = Self.day
        try subscribe("7000000001", user: 11, purchased: now - 35 * day, expires: now - 5 * day)
        let renewal = transaction("7000000002", "7000000001", user: 11, purchased: now - 5 * day, expires: now + 25 * day)
        let turnedOff = sync.appleNotification(
            "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "off-7", signedDate: now - 2 * day, transaction: renewal,
            renewal: ["autoRenewStatus": 0]
        )
        #expect(try stores.post("/apple", body: turnedOff).body == "applied\n")
        #expect(try sync.membership(original: "7000000001").isActive == false)
        try sync.setApple(
            original: "7000000001",
            transactions: [transaction("7000000001", "7000000001", user: 11, purchased: now - 35 * day, expires: now - 5 * day), renewal],
            status: 1, autoRenew: false
        )
        // Refunded three days ago, unheard; renewal turned off yesterday, heard.
        try subscribe("7100000001", user: 12, purchased: now - 10 * day, expires: now + 20 * day)
        let refunded = transaction("7100000001", "7100000001", user: 12, purchased: now - 10 * day, expires: now + 20 * day, revoked: now - 3 * day)
        let offAfterRefund = sync.appleNotification(
            "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "off-71", signedDate: now - day,
            transaction: transaction("7100000001", "7100000001", user: 12, purchased: now - 10 * day, expires: now + 20 * day), renewal: ["autoRenewStatus": 0]
        )
        #expect(try stores.post("/apple", body: offAfterRefund).body == "applied\n")
        try sync.setApple(original: "7100000001", transactions: [refunded], status: 5, autoRenew: false)

        let run = try await sync.run("reconcile")
        #expect(run.status == 0, "\(run.output)")
        #expect(try sync.membership(original: "7100000001").status == "revoked", "the refund was not applied: \(run.output)")
        let membership = try sync.membership(original: "7000000001")
        #expect(membership.isActive, "the paid renewal was not applied: \(run.output)")
        #expect(membership.expiresAt.flatMap(ProtocolTime.milliseconds) == now + 25 * day)
        #expect(membership.renewsCount == 1 && !membership.willRenew)
        #expect(membership.transactions.map(\.id) == ["7000000001", "7000000002"])
        #expect(run.output.contains("app_store: checked 2, corrected 2, failed 0 (cancellation 1, refund 1, renewal 1)"), "\(run.output)")
        let again = try await sync.run("reconcile")
        #expect(again.output.contains("app_store: checked 2, corrected 0, failed 0"), "\(again.output)")
    }

    @Test func onlyTheStoresMembershipsWithinTheWindowAreAskedAndOneItDoesNotKnowFails() async throws {
        let now = Self.now, day = Self.day
        try subscribe("8000000001", user: 21, purchased: now - 5 * day, expires: now + 25 * day)
        try sync.setApple(
            original: "8000000001", transactions: [transaction("8000000001", "8000000001", user: 21, purchased: now - 5 * day, expires: now + 25 * day)],
            status: 1
        )
        // Ended 40 days ago: outside the default window of 30 days.
        try subscribe("8100000001", user: 22, purchased: now - 70 * day, expires: now - 40 * day)
        try sync.setApple(
            original: "8100000001", transactions: [transaction("8100000001", "8100000001", user: 22, purchased: now - 70 * day, expires: now - 40 * day)],
            status: 2, autoRenew: false
        )
        // One the App Store does not know (a purchase of another app's account, a transaction mistyped).
        try subscribe("8200000001", user: 23, purchased: now - 5 * day, expires: now + 25 * day)
        // Memberships of other sources.
        _ = try sync.client.send(.grant(user: "someone", product: "prod_pro", source: "stripe", duration: "30d", transactionId: "in_1", originalTransactionId: "sub_1"))
        _ = try sync.client.send(.grant(user: "someone", product: "prod_pro", duration: "30d"))

        let run = try await sync.run("reconcile")
        #expect(run.status == 3, "\(run.output)")
        #expect(run.output.contains("app_store: checked 2, corrected 0, failed 1"), "\(run.output)")
        let unknown = try sync.membership(original: "8200000001")
        #expect(run.output.contains("could not reconcile app_store membership \(unknown.id): not_found"), "\(run.output)")
        let paths = try StoreSyncHarness.paths(sync.apple)
        #expect(paths.count == 3, "\(paths)")
        #expect(paths.filter { $0.contains("8000000001") }.count == 2)
        #expect(!paths.contains { $0.contains("8100000001") || $0.contains("sub_1") || $0.contains("in_1") }, "\(paths)")
        // The unknown one is left as it was.
        #expect(unknown.isActive && unknown.willRenew)

        // A window of 50 days takes in the one that ended 40 days ago: its expiry was missed too.
        let wider = try await sync.run("reconcile", ["--reconcile-window-days", "50"])
        #expect(wider.status == 3, "\(wider.output)")
        #expect(wider.output.contains("app_store: checked 3, corrected 1, failed 1 (expiration 1)"), "\(wider.output)")
        #expect(try sync.membership(original: "8100000001").willRenew == false)
    }
}
