import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

import EntitledStores

/// Stripe's webhooks through real `entitled` and `entitled-stores` processes on loopback: a subscription's
/// life becomes one membership's; redeliveries and old events change nothing; whatever is refused changes
/// nothing; an unreachable `entitled` answers 503 and the retry applies once.
@Suite struct StripeNotificationTests {
    let processes: StripeReceiverProcesses
    var entitled: RunningEntitled { processes.entitled }
    var stores: RunningStores { processes.stores }
    var client: EntitledConnection { processes.client }

    init() throws {
        processes = try StripeReceiverProcesses()
    }

    func deliver(_ body: [UInt8]) throws -> HTTPReply {
        try stores.post("/stripe", body: body, headers: StripeFixtures.signed(body))
    }

    func current(_ user: String) throws -> MembershipInfo? {
        try client.send(.memberships(user: user)).memberships?.first
    }

    @Test func aSubscriptionsLifeBecomesItsMembershipsOnceAndInOrder() throws {
        let start = StripeFixtures.now - 3600
        let firstEnd = start + 30 * 86_400
        let secondEnd = firstEnd + 30 * 86_400

        // A purchase.
        let created = StripeFixtures.subscriptionEvent("evt_1", type: "customer.subscription.created", created: start, periodEnd: firstEnd)
        #expect(try deliver(created).status == 200)
        var membership = try #require(try current("user_1"))
        #expect(membership.productId == "prod_pro")
        #expect(membership.source == "stripe")
        #expect(membership.environment == "sandbox")
        #expect(membership.isActive)
        #expect(membership.expiresAt.flatMap(ProtocolTimeForTests.seconds) == firstEnd)
        #expect(membership.transactions.map(\.id) == ["in_1"])
        #expect(try client.send(.memberships(originalTransactionId: "sub_1")).memberships?.map(\.id) == [membership.id])

        // The same delivery again: nothing new.
        let again = try deliver(created)
        #expect(again.status == 200)
        #expect(again.body == "duplicate\n")
        #expect(try client.send(.memberships(user: "user_1")).memberships?.count == 1)

        // A renewal: the period moves on, with its invoice.
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_2", created: start + 10, periodEnd: secondEnd, latestInvoice: "in_2")).body == "applied\n")
        membership = try #require(try current("user_1"))
        #expect(membership.renewsCount == 1)
        #expect(membership.expiresAt.flatMap(ProtocolTimeForTests.seconds) == secondEnd)
        #expect(membership.transactions.map(\.id) == ["in_1", "in_2"])

        // A failed charge: a billing issue with a grace period of 7 days after the paid period.
        let failed = StripeFixtures.subscriptionEvent("evt_3", created: start + 20, status: "past_due", periodEnd: secondEnd + 30 * 86_400, latestInvoice: "in_3")
        #expect(try deliver(failed).status == 200)
        membership = try #require(try current("user_1"))
        #expect(membership.renewState == "billing_issue")
        #expect(membership.gracePeriodExpiresAt.flatMap(ProtocolTimeForTests.seconds) == secondEnd + 7 * 86_400)
        #expect(membership.expiresAt.flatMap(ProtocolTimeForTests.seconds) == secondEnd)
        #expect(membership.isActive)

        // An older event arriving late (a cancellation from before the failure) changes nothing.
        let late = StripeFixtures.subscriptionEvent("evt_late", created: start + 15, periodEnd: secondEnd, cancelAtPeriodEnd: true, latestInvoice: "in_2")
        let lateReply = try deliver(late)
        #expect(lateReply.status == 200)
        #expect(lateReply.body.hasPrefix("ignored"))
        #expect(try current("user_1")?.willRenew == true)

        // The charge went through after all; then the customer cancels at the period's end.
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_4", created: start + 30, periodEnd: secondEnd, latestInvoice: "in_2")).status == 200)
        #expect(try current("user_1")?.renewState == "will_renew")
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_5", created: start + 40, periodEnd: secondEnd, cancelAtPeriodEnd: true, latestInvoice: "in_2")).status == 200)
        membership = try #require(try current("user_1"))
        #expect(membership.willRenew == false)
        #expect(membership.isActive)

        // A refund of the renewal's charge ends it.
        #expect(try deliver(StripeFixtures.refundEvent("evt_6", created: start + 50, invoice: "in_2")).body == "applied\n")
        membership = try #require(try current("user_1"))
        #expect(!membership.isActive)
        #expect(try client.send(.check(user: "user_1", product: "prod_pro")).body["active"]?.boolValue == false)
        let trail = try client.send(.history(user: "user_1")).history?.map(\.action)
        #expect(trail == ["refund", "cancellation", "billing_recovered", "billing_issue", "renewal", "grant"])
    }

    /// Stripe's trial sequences (https://docs.stripe.com/billing/subscriptions/trials): a trial extended
    /// (its `trial_end` moved) stays a trial; its end with a payment is the first renewal; without a
    /// payment method it pauses or cancels, as the subscription's `missing_payment_method` setting says.
    @Test func anExtendedTrialStaysATrialAndItsEndIsARenewalOrAPauseOrAnExpiry() throws {
        let start = StripeFixtures.now - 3600
        let trialEnd = start + 7 * 86_400
        let extendedEnd = trialEnd + 7 * 86_400
        let created = StripeFixtures.subscriptionEvent("evt_t1", type: "customer.subscription.created", created: start, subscription: "sub_t", status: "trialing", periodEnd: trialEnd, user: "user_t")
        #expect(try deliver(created).status == 200)
        var membership = try #require(try current("user_t"))
        #expect(membership.status == "trialing")
        #expect(membership.periodType == "trial")

        // The trial is extended by a week: still a trial, not renewed, access until the new end.
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_t2", created: start + 10, subscription: "sub_t", status: "trialing", periodEnd: extendedEnd, user: "user_t")).body == "applied\n")
        membership = try #require(try current("user_t"))
        #expect(membership.periodType == "trial")
        #expect(membership.status == "trialing")
        #expect(membership.renewsCount == 0)
        #expect(membership.expiresAt.flatMap(ProtocolTimeForTests.seconds) == extendedEnd)

        // The trial ends and the first month is paid: a renewal, no longer a trial.
        let paidEnd = extendedEnd + 30 * 86_400
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_t3", created: start + 20, subscription: "sub_t", periodEnd: paidEnd, user: "user_t", latestInvoice: "in_t2")).body == "applied\n")
        membership = try #require(try current("user_t"))
        #expect(membership.periodType == "normal")
        #expect(membership.status == "active")
        #expect(membership.renewsCount == 1)
        #expect(membership.expiresAt.flatMap(ProtocolTimeForTests.seconds) == paidEnd)
        #expect(try client.send(.history(user: "user_t")).history?.map(\.action) == ["renewal", "extension", "grant"])

        // Trials that end without a payment method: paused (access stops) or canceled (access ends).
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_p1", type: "customer.subscription.created", created: start, subscription: "sub_p", status: "trialing", periodEnd: trialEnd, user: "user_p")).status == 200)
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_p2", created: start + 10, subscription: "sub_p", status: "paused", periodEnd: trialEnd, user: "user_p")).body == "applied\n")
        #expect(try current("user_p")?.isActive == false)
        #expect(try current("user_p")?.status == "paused")
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_c1", type: "customer.subscription.created", created: start, subscription: "sub_c", status: "trialing", periodEnd: trialEnd, user: "user_c")).status == 200)
        let canceled = StripeFixtures.subscriptionEvent("evt_c2", type: "customer.subscription.deleted", created: start + 10, subscription: "sub_c", status: "canceled", periodEnd: trialEnd, user: "user_c")
        #expect(try deliver(canceled).body == "applied\n")
        #expect(try current("user_c")?.isActive == false)
        #expect(try current("user_c")?.status == "expired")
    }

    @Test func aDeletedSubscriptionEndsAccessAndAnUnknownChargeIsUnmatched() throws {
        let start = StripeFixtures.now - 3600
        let end = start + 30 * 86_400
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_a", type: "customer.subscription.created", created: start, subscription: "sub_2", periodEnd: end, user: "user_2")).status == 200)
        #expect(try current("user_2")?.isActive == true)
        let deleted = StripeFixtures.subscriptionEvent("evt_b", type: "customer.subscription.deleted", created: start + 60, subscription: "sub_2", status: "canceled", periodEnd: end, user: "user_2")
        #expect(try deliver(deleted).status == 200)
        #expect(try current("user_2")?.isActive == false)
        #expect(try current("user_2")?.status == "expired")
        let unmatched = try deliver(StripeFixtures.refundEvent("evt_c", created: start + 70, invoice: "in_unknown"))
        #expect(unmatched.status == 200)
        #expect(unmatched.body.hasPrefix("unmatched"))
        // A subscription without the metadata key belongs to its Stripe customer.
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_d", type: "customer.subscription.created", created: start, subscription: "sub_3", periodEnd: end, user: nil)).status == 200)
        #expect(try current("cus_9")?.isActive == true)
        let metrics = try stores.get("/metrics").body
        #expect(metrics.contains(#"entitled_stores_notifications_total{store="stripe",outcome="unmatched"} 1"#))
        #expect(metrics.contains(#"entitled_stores_notifications_total{store="stripe",outcome="applied"} 3"#))
    }

    @Test func whatIsRefusedChangesNothing() throws {
        let body = StripeFixtures.subscriptionEvent("evt_r", type: "customer.subscription.created", created: StripeFixtures.now - 60, periodEnd: StripeFixtures.now + 86_400, user: "user_r")
        var tampered = body
        tampered.append(contentsOf: Array(" ".utf8))
        let replies = [
            try stores.post("/stripe", body: tampered, headers: StripeFixtures.signed(body)),
            try stores.post("/stripe", body: body, headers: [:]),
            try stores.post("/stripe", body: body, headers: StripeFixtures.signed(body, secret: "whsec_someone_else")),
            try stores.post("/stripe", body: body, headers: StripeFixtures.signed(body, at: StripeFixtures.now - 600)),
            try stores.post("/stripe", body: [UInt8](repeating: 0x20, count: (1 << 20) + 1), headers: StripeFixtures.signed(body)),
            try stores.post("/stripe/extra", body: body, headers: StripeFixtures.signed(body)),
        ]
        #expect(replies.map(\.status) == [400, 400, 400, 400, 413, 404])
        #expect(replies[0].body == "the Stripe-Signature does not match the body with the configured signing secret\n")
        #expect(replies[1].body == "no Stripe-Signature header\n")
        #expect(replies[3].body.hasPrefix("the Stripe-Signature time"))
        #expect(replies[4].body == "the body is larger than 1048576 bytes\n")
        #expect(try client.send(.memberships(user: "user_r")).memberships == [])
        #expect(try client.send(.memberships(originalTransactionId: "sub_1")).memberships == [])
        let metrics = try stores.get("/metrics").body
        #expect(metrics.contains(#"entitled_stores_refused_total{store="stripe",reason="bad_signature"} 3"#))
        #expect(metrics.contains(#"entitled_stores_refused_total{store="stripe",reason="stale_timestamp"} 1"#))
        #expect(metrics.contains(#"entitled_stores_refused_total{store="stripe",reason="too_large"} 1"#))
        // A store with no settings is not served.
        let apple = try stores.post("/apple", body: Array("{}".utf8))
        #expect(apple.status == 404)
    }

    @Test func anUnreachableEntitledAnswers503AndTheRetryAppliesOnce() throws {
        let body = StripeFixtures.subscriptionEvent("evt_u", type: "customer.subscription.created", created: StripeFixtures.now - 60, periodEnd: StripeFixtures.now + 86_400, user: "user_u")
        entitled.kill()
        let down = try deliver(body)
        #expect(down.status == 503)
        #expect(down.body.hasPrefix("unavailable: entitled at 127.0.0.1:"))
        try entitled.restart()
        // The store's retry, with a fresh signature, as Stripe signs each attempt.
        let retried = try stores.retryingWhileUnavailable { try deliver(body) }
        #expect(retried.status == 200)
        #expect(retried.body == "applied\n")
        #expect(try deliver(body).body == "duplicate\n")
        let client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port))
        #expect(try client.send(.memberships(user: "user_u")).memberships?.count == 1)
    }
}

/// The protocol's times as Unix seconds, for comparing with the fixtures'.
enum ProtocolTimeForTests {
    static func seconds(_ text: String) -> Int64? {
        ProtocolTime.milliseconds(text).map { $0 / 1000 }
    }
}
