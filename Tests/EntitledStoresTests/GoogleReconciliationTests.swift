import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `entitled-stores reconcile` with Google Play: memberships made by developer notifications through a
/// real receiver, then the Play Developer API's stand-in telling what the missed notifications would
/// have (a renewal, an expiry, renewal turned off, a one-time product refunded); each applied once, with
/// the reason `reconciliation`.
// One test at a time: each runs entitled, entitled-stores and stand-ins, and the suites' tests all at once
// starved the rest of the full run (timing tests elsewhere ran out of time).
@Suite(.serialized) struct GoogleReconciliationTests {
    let sync: StoreSyncHarness
    let stores: RunningStores
    static let now = StoreSyncHarness.now
    static let day = StoreSyncHarness.day

    init() throws {
        sync = try StoreSyncHarness([.google])
        stores = try sync.receiver()
    }

    /// A subscription bought by `user`, its SUBSCRIPTION_PURCHASED notification delivered.
    func subscribe(_ token: String, user: String, order: String, expiry: Int64) throws {
        try sync.setGoogle(subscription: token, StoreSyncHarness.googleSubscription("SUBSCRIPTION_STATE_ACTIVE", order: order, expiry: expiry, user: user))
        let push = try StoreSyncHarness.googlePush(
            "m-\(token)", ["subscriptionNotification": ["version": "1.0", "notificationType": 4, "purchaseToken": token, "subscriptionId": "premium_monthly"]],
            eventTime: Self.now - 3_600_000
        )
        let reply = try stores.post("/google", body: push)
        #expect(reply.body == "applied\n", "\(reply.status) \(reply.body)")
    }

    @Test func eachMissedChangeIsAppliedAsItsEventOnceWithTheReasonReconciliation() async throws {
        let now = Self.now, day = Self.day
        try subscribe("tok-renew", user: "g-renew", order: "GPA.1000-0000-0000-00001", expiry: now + day)
        try subscribe("tok-expire", user: "g-expire", order: "GPA.1000-0000-0000-00002", expiry: now + day)
        // Its period ended two hours ago and it was to renew: expired by time, willRenew still set.
        try subscribe("tok-lapsed", user: "g-lapsed", order: "GPA.1000-0000-0000-00003", expiry: now - 7_200_000)
        try subscribe("tok-cancel", user: "g-cancel", order: "GPA.1000-0000-0000-00004", expiry: now + 10 * day)
        try subscribe("tok-agree", user: "g-agree", order: "GPA.1000-0000-0000-00005", expiry: now + 10 * day)
        try sync.setGoogle(product: "tok-product", StoreSyncHarness.googleProduct(order: "GPA.2000-0000-0000-00001", user: "g-product"))
        let bought = try StoreSyncHarness.googlePush(
            "m-product", ["oneTimeProductNotification": ["version": "1.0", "notificationType": 1, "purchaseToken": "tok-product", "sku": "lifetime_pro"]],
            eventTime: now - 3_600_000
        )
        #expect(try stores.post("/google", body: bought).body == "applied\n")

        // What happened since, unheard.
        try sync.setGoogle(
            subscription: "tok-renew",
            StoreSyncHarness.googleSubscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.1000-0000-0000-00001..0", expiry: now + 31 * day, user: "g-renew")
        )
        try sync.setGoogle(
            subscription: "tok-expire",
            StoreSyncHarness.googleSubscription("SUBSCRIPTION_STATE_EXPIRED", order: "GPA.1000-0000-0000-00002", expiry: now - 3_600_000, autoRenew: false, user: "g-expire")
        )
        try sync.setGoogle(
            subscription: "tok-lapsed",
            StoreSyncHarness.googleSubscription("SUBSCRIPTION_STATE_EXPIRED", order: "GPA.1000-0000-0000-00003", expiry: now - 7_200_000, autoRenew: false, user: "g-lapsed")
        )
        try sync.setGoogle(
            subscription: "tok-cancel",
            StoreSyncHarness.googleSubscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.1000-0000-0000-00004", expiry: now + 10 * day, autoRenew: false, user: "g-cancel")
        )
        // purchaseState 1: canceled, for a paid purchase a refund or chargeback
        // (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.products).
        try sync.setGoogle(product: "tok-product", StoreSyncHarness.googleProduct(order: "GPA.2000-0000-0000-00001", user: "g-product", purchaseState: 1))
        let before = try #require(try sync.google?.traffic().requests)

        let run = try await sync.run("reconcile")
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("play_store: checked 6, corrected 5, failed 0 (cancellation 1, expiration 2, refund 1, renewal 1)"), "\(run.output)")
        for (token, user, change) in [
            ("tok-renew", "g-renew", "renewal"), ("tok-expire", "g-expire", "expiration"), ("tok-lapsed", "g-lapsed", "expiration"),
            ("tok-cancel", "g-cancel", "cancellation"), ("tok-product", "g-product", "refund"),
        ] {
            let membership = try sync.membership(original: token)
            #expect(run.output.contains("reconciled play_store membership \(membership.id) of \(user): \(change)"), "\(token): \(run.output)")
            let newest = try #require(try sync.history(user).first)
            #expect(newest.action == change && newest.reason == "reconciliation", "\(token): \(newest)")
        }
        let renewed = try sync.membership(original: "tok-renew")
        #expect(renewed.isActive && renewed.renewsCount == 1)
        #expect(renewed.expiresAt.flatMap(ProtocolTime.milliseconds) == now + 31 * day)
        #expect(renewed.transactions.map(\.id) == ["GPA.1000-0000-0000-00001", "GPA.1000-0000-0000-00001..0"])
        let expired = try sync.membership(original: "tok-expire")
        #expect(!expired.isActive && !expired.willRenew)
        #expect(try sync.membership(original: "tok-lapsed").willRenew == false)
        let canceled = try sync.membership(original: "tok-cancel")
        #expect(canceled.isActive && !canceled.willRenew)
        #expect(try sync.membership(original: "tok-product").status == "revoked")
        #expect(try sync.google?.traffic().requests == before + 6, "one Play Developer API call a membership")

        let trails = try ["g-renew", "g-expire", "g-lapsed", "g-cancel", "g-agree", "g-product"].map { try sync.history($0).count }
        let again = try await sync.run("reconcile")
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("play_store: checked 6, corrected 0, failed 0\n"), "\(again.output)")
        #expect(try ["g-renew", "g-expire", "g-lapsed", "g-cancel", "g-agree", "g-product"].map { try sync.history($0).count } == trails)
    }

    @Test func aMembershipImportedByItsOrderIdIsNotAskedAndNotAFailure() async throws {
        // A RevenueCat export names Google's order, not the purchase token the API needs.
        let granted = try sync.client.send(
            .grant(user: "g-imported", product: "premium_monthly", source: "play_store", expiresAt: ProtocolTime.string(milliseconds: Self.now + Self.day),
                   transactionId: "GPA.3000-0000-0000-00001")
        )
        #expect(granted.isOK)
        let before = try #require(try sync.google?.traffic().requests)
        let run = try await sync.run("reconcile")
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("play_store: checked 1, corrected 0, failed 0; not asked: 1"), "\(run.output)")
        #expect(try sync.google?.traffic().requests == before, "Google is not asked about an order id")
    }
}
