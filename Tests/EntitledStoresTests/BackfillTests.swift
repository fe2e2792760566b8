import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `entitled-stores backfill --since`: what the stores say happened (the App Store's notification
/// history, Stripe's events, Google Play's voided purchases) applied through the receivers as if each
/// notification had just arrived; what was applied before is recognised; what waits for its purchase is
/// kept; a `--since` beyond what a store keeps is refused before anything is applied.
// One test at a time: each runs entitled, entitled-stores and stand-ins, and the suites' tests all at once
// starved the rest of the full run (timing tests elsewhere ran out of time).
@Suite(.serialized) struct BackfillTests {
    static let day = StoreSyncHarness.day

    @Test func theAppStoresMissedNotificationsAreAppliedAndThoseReceivedRecognised() async throws {
        let sync = try StoreSyncHarness([.apple])
        let stores = try sync.receiver()
        let now = StoreSyncHarness.now, day = Self.day
        func user(_ number: Int) -> String { StoreSyncHarness.appleUser(number) }
        func transaction(_ id: String, _ original: String, user number: Int?, purchased: Int64, expires: Int64, revoked: Int64? = nil) -> [String: Any] {
            StoreSyncHarness.appleTransaction(id, original: original, purchased: purchased, expires: expires, token: number.map(user), revoked: revoked)
        }
        // A: subscribed (received), renewed (missed).
        let a1 = transaction("1100000001", "1100000001", user: 31, purchased: now - 9 * day, expires: now - 2 * day)
        let subscribedA = sync.appleNotification("SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "bf-a1", signedDate: now - 9 * day, transaction: a1, renewal: ["autoRenewStatus": 1])
        #expect(try stores.post("/apple", body: subscribedA).body == "applied\n")
        let a2 = transaction("1100000002", "1100000001", user: 31, purchased: now - 2 * day, expires: now + 28 * day)
        let renewedA = sync.appleNotification("DID_RENEW", uuid: "bf-a2", signedDate: now - 2 * day, transaction: a2)
        // B: subscribed (received), refunded (missed).
        let b1 = transaction("1200000001", "1200000001", user: 32, purchased: now - 8 * day, expires: now + 22 * day)
        let subscribedB = sync.appleNotification("SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "bf-b1", signedDate: now - 8 * day, transaction: b1, renewal: ["autoRenewStatus": 1])
        #expect(try stores.post("/apple", body: subscribedB).body == "applied\n")
        let refundedB = sync.appleNotification(
            "REFUND", uuid: "bf-b2", signedDate: now - day,
            transaction: transaction("1200000001", "1200000001", user: 32, purchased: now - 8 * day, expires: now + 22 * day, revoked: now - day)
        )
        // C: a purchase whose SUBSCRIBED never arrived; D: a renewal of a purchase no one knows, naming no user.
        let subscribedC = sync.appleNotification(
            "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "bf-c1", signedDate: now - 3 * day,
            transaction: transaction("1300000001", "1300000001", user: 33, purchased: now - 3 * day, expires: now + 27 * day), renewal: ["autoRenewStatus": 1]
        )
        let renewedD = sync.appleNotification(
            "DID_RENEW", uuid: "bf-d2", signedDate: now - day,
            transaction: transaction("1400000002", "1400000001", user: nil, purchased: now - day, expires: now + 29 * day)
        )
        for (body, date, original) in [
            (subscribedA, now - 9 * day, "1100000001"), (subscribedB, now - 8 * day, "1200000001"), (subscribedC, now - 3 * day, "1300000001"),
            (renewedA, now - 2 * day, "1100000001"), (refundedB, now - day, "1200000001"), (renewedD, now - day, "1400000001"),
        ] {
            try sync.addAppleHistory(body, date: date, original: original)
        }

        let run = try await sync.run("backfill", ["--since", StoreSyncHarness.since(daysAgo: 10)])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("apple: applied 3, duplicate 2, ignored 0, unmatched 1, failed 0"), "\(run.output)")
        let renewed = try sync.membership(original: "1100000001")
        #expect(renewed.renewsCount == 1 && renewed.isActive && renewed.expiresAt.flatMap(ProtocolTime.milliseconds) == now + 28 * day)
        #expect(try sync.membership(original: "1200000001").status == "revoked")
        let granted = try sync.membership(original: "1300000001")
        #expect(granted.user == user(33) && granted.isActive)
        #expect(try sync.client.send(.memberships(originalTransactionId: "1400000001")).memberships == [])
        let kept = try await sync.run("unmatched")
        #expect(kept.status == 0, "\(kept.output)")
        #expect(kept.output.contains("apple  original transaction 1400000001"), "\(kept.output)")
        #expect(kept.output.contains("1 notification waiting"), "\(kept.output)")

        // Again: everything is recognised, nothing changes.
        let trails = try [31, 32, 33].map { try sync.history(user($0)).count }
        let again = try await sync.run("backfill", ["--since", StoreSyncHarness.since(daysAgo: 10)])
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("apple: applied 0, duplicate 5, ignored 0, unmatched 1, failed 0"), "\(again.output)")
        #expect(try [31, 32, 33].map { try sync.history(user($0)).count } == trails)
        #expect(try await sync.run("unmatched").output.contains("1 notification waiting"))

        // Apple keeps 180 days of history.
        let requests = try #require(try sync.apple?.traffic().requests)
        let tooOld = try await sync.run("backfill", ["--since", StoreSyncHarness.since(daysAgo: 181)])
        #expect(tooOld.status != 0)
        #expect(tooOld.output.contains("the App Store keeps 180 days of notification history"), "\(tooOld.output)")
        #expect(try sync.apple?.traffic().requests == requests)
    }

    /// A `--since` one store cannot go back to is refused before any store is asked, rather than after
    /// another store's notifications were applied (and its summary never printed).
    @Test func aSinceBeyondOneStoresWindowIsRefusedBeforeAnyStoreIsAsked() async throws {
        let sync = try StoreSyncHarness([.apple, .stripe])
        let run = try await sync.run("backfill", ["--since", StoreSyncHarness.since(daysAgo: 60)])
        #expect(run.status != 0)
        #expect(run.output.contains("Stripe keeps 30 days of events"), "\(run.output)")
        #expect(try sync.apple?.traffic().requests == 0, "the App Store was asked before the refusal")
        #expect(try sync.stripe?.traffic().requests == 0)
    }

    @Test func stripesEventsAreAppliedInTheOrderTheyHappenedAndThoseAppliedRecognised() async throws {
        let sync = try StoreSyncHarness([.stripe])
        let stores = try sync.receiver()
        let now = StripeFixtures.now, day: Int64 = 86_400
        // A weekly subscription: bought 9 days ago (received), renewed 2 days ago, its renewal's charge
        // refunded yesterday, renewal turned off 12 hours ago (all three missed).
        let bought = StoreSyncHarness.stripeSubscription("sub_bf", user: "s-bf", periodEnd: now - 2 * day, invoice: "in_bf_1", created: now - 9 * day)
        let renewed = StoreSyncHarness.stripeSubscription("sub_bf", user: "s-bf", periodEnd: now + 5 * day, invoice: "in_bf_2", created: now - 9 * day)
        let turnedOff = StoreSyncHarness.stripeSubscription(
            "sub_bf", user: "s-bf", periodEnd: now + 5 * day, invoice: "in_bf_2", cancelAtPeriodEnd: true, created: now - 9 * day
        )
        // Another bought 3 days ago, whose creation was missed.
        let other = StoreSyncHarness.stripeSubscription("sub_bf2", user: "s-bf2", periodEnd: now + 27 * day, invoice: "in_bf2_1", created: now - 3 * day)
        let events = [
            StoreSyncHarness.stripeEvent("evt_1created", type: "customer.subscription.created", created: now - 9 * day, object: bought),
            StoreSyncHarness.stripeEvent("evt_2renewed", created: now - 2 * day, object: renewed),
            StripeFixtures.refundEvent("evt_3refunded", created: now - day, invoice: "in_bf_2"),
            StoreSyncHarness.stripeEvent("evt_4off", created: now - day / 2, object: turnedOff),
            StoreSyncHarness.stripeEvent("evt_5other", type: "customer.subscription.created", created: now - 3 * day, object: other),
        ]
        #expect(try stores.post("/stripe", body: events[0], headers: StripeFixtures.signed(events[0])).body == "applied\n")
        try sync.stripe?.set(["events": try events.map { try JSONSerialization.jsonObject(with: Data($0)) }])

        let run = try await sync.run("backfill", ["--since", StoreSyncHarness.since(daysAgo: 10)])
        #expect(run.status == 0, "\(run.output)")
        // The refund revoked the membership (and ended its renewal), so the later cancellation changes nothing:
        // a new event, ignored for the revoked membership (not a repeat of one applied).
        #expect(run.output.contains("stripe: applied 3, duplicate 1, ignored 1, unmatched 0, failed 0"), "\(run.output)")
        let membership = try sync.membership(original: "sub_bf")
        #expect(membership.status == "revoked", "the refund was lost: \(membership)")
        #expect(membership.renewsCount == 1)
        #expect(membership.revokedAt.flatMap(ProtocolTimeForTests.seconds) == now - day)
        #expect(try sync.membership(original: "sub_bf2").isActive)

        let trails = try ["s-bf", "s-bf2"].map { try sync.history($0).count }
        let again = try await sync.run("backfill", ["--since", StoreSyncHarness.since(daysAgo: 10)])
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("stripe: applied 0,"), "\(again.output)")
        #expect(try ["s-bf", "s-bf2"].map { try sync.history($0).count } == trails)

        let tooOld = try await sync.run("backfill", ["--since", StoreSyncHarness.since(daysAgo: 31)])
        #expect(tooOld.status != 0)
        #expect(tooOld.output.contains("Stripe keeps 30 days of events"), "\(tooOld.output)")
    }

    @Test func googlesVoidedPurchasesAreAppliedAsRefundsThenItsMembershipsReconciled() async throws {
        let sync = try StoreSyncHarness([.google])
        let stores = try sync.receiver()
        let now = StoreSyncHarness.now, day = Self.day
        try sync.setGoogle(product: "tok-void", StoreSyncHarness.googleProduct(order: "GPA.3000-0000-0000-00001", user: "g-void"))
        let bought = try StoreSyncHarness.googlePush(
            "m-void", ["oneTimeProductNotification": ["version": "1.0", "notificationType": 1, "purchaseToken": "tok-void", "sku": "lifetime_pro"]],
            eventTime: now - 2 * day
        )
        #expect(try stores.post("/google", body: bought).body == "applied\n")
        try sync.setGoogle(
            subscription: "tok-bf", StoreSyncHarness.googleSubscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.3000-0000-0000-00002", expiry: now + day, user: "g-bf")
        )
        let subscribed = try StoreSyncHarness.googlePush(
            "m-bf", ["subscriptionNotification": ["version": "1.0", "notificationType": 4, "purchaseToken": "tok-bf", "subscriptionId": "premium_monthly"]],
            eventTime: now - 2 * day
        )
        #expect(try stores.post("/google", body: subscribed).body == "applied\n")
        // Refunded an hour ago; the subscription renewed meanwhile. Neither notification arrived.
        try sync.setGoogle(product: "tok-void", StoreSyncHarness.googleProduct(order: "GPA.3000-0000-0000-00001", user: "g-void", purchaseState: 1))
        try sync.google?.set([
            "voided": [[
                "kind": "androidpublisher#voidedPurchase", "purchaseToken": "tok-void", "orderId": "GPA.3000-0000-0000-00001",
                "purchaseTimeMillis": String(now - 2 * day), "voidedTimeMillis": String(now - 3_600_000), "voidedSource": 0, "voidedReason": 1,
            ]]
        ])
        try sync.setGoogle(
            subscription: "tok-bf",
            StoreSyncHarness.googleSubscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.3000-0000-0000-00002..0", expiry: now + 31 * day, user: "g-bf")
        )

        let run = try await sync.run("backfill", ["--since", StoreSyncHarness.since(daysAgo: 3)])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("google: applied 1, duplicate 0, ignored 0, unmatched 0, failed 0"), "\(run.output)")
        #expect(run.output.contains("play_store: checked 2, corrected 1, failed 0 (renewal 1)"), "\(run.output)")
        let voided = try sync.membership(original: "tok-void")
        #expect(voided.status == "revoked")
        #expect(voided.revokedAt.flatMap(ProtocolTime.milliseconds) == now - 3_600_000)
        #expect(try sync.history("g-void").first?.action == "refund")
        #expect(try sync.membership(original: "tok-bf").renewsCount == 1)

        let again = try await sync.run("backfill", ["--since", StoreSyncHarness.since(daysAgo: 3)])
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("google: applied 0, duplicate 1, ignored 0, unmatched 0, failed 0"), "\(again.output)")
        #expect(again.output.contains("play_store: checked 2, corrected 0, failed 0"), "\(again.output)")

        let tooOld = try await sync.run("backfill", ["--since", StoreSyncHarness.since(daysAgo: 31)])
        #expect(tooOld.status != 0)
        #expect(tooOld.output.contains("Google Play lists 30 days of voided purchases"), "\(tooOld.output)")
    }
}
