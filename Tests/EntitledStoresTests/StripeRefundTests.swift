import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Stripe refunds as API versions from 2025-03-31 write them (issue #45): the refunded charge no longer
/// names its invoice, so the receiver asks Stripe's Invoice Payments for the invoice its payment intent paid
/// (a stand-in written from the API reference, Fixtures/stripe_standin.py). A refund is never answered 200
/// and forgotten: Stripe failing or no API key is a 503 (Stripe delivers it again), and a refund of a
/// subscription not granted yet is kept and applied once it is.
@Suite struct StripeRefundTests {
    let stripe: StoreStandIn
    let entitled: RunningEntitled
    let client: EntitledConnection
    let files: TemporaryDirectory

    init() throws {
        stripe = try StoreStandIn("stripe_standin")
        entitled = try RunningEntitled()
        client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port))
        files = try TemporaryDirectory()
    }

    func receiver(apiKey: String? = "sk_test_standin") throws -> RunningStores {
        var arguments = ["--stripe-api-url", stripe.url, "--unmatched-retry-seconds", "1"]
        if let apiKey {
            let file = files.path + "/stripe-\(apiKey).key"
            try (apiKey + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            arguments += ["--stripe-api-key-file", file]
        }
        return try RunningStores(
            entitled: "127.0.0.1:\(entitled.port)", environment: ["ENTITLED_STORES_STRIPE_SECRET": StripeFixtures.secret], arguments: arguments
        )
    }

    func deliver(_ body: [UInt8], to stores: RunningStores) throws -> HTTPReply {
        try stores.post("/stripe", body: body, headers: StripeFixtures.signed(body))
    }

    func subscribe(_ user: String, subscription: String, invoice: String, at created: Int64, to stores: RunningStores) throws {
        let body = StripeFixtures.subscriptionEvent(
            "evt_s_\(user)", type: "customer.subscription.created", created: created, subscription: subscription,
            periodEnd: created + 30 * 86_400, user: user, latestInvoice: invoice
        )
        #expect(try deliver(body, to: stores).status == 200)
    }

    func membership(_ user: String) throws -> MembershipInfo? {
        try client.send(.memberships(user: user)).memberships?.first
    }

    @Test func aRefundedChargeOfTheCurrentAPIVersionRefundsTheMembershipOfItsPaymentIntentsInvoice() throws {
        let stores = try receiver()
        let start = StripeFixtures.now - 3600
        try subscribe("user_r", subscription: "sub_r", invoice: "in_r1", at: start, to: stores)
        #expect(try membership("user_r")?.isActive == true)
        try stripe.set(["payments": ["pi_r1": "in_r1"]])
        let refunded = try deliver(StripeFixtures.basilRefundEvent("evt_r", created: start + 60, paymentIntent: "pi_r1"), to: stores)
        #expect(refunded.status == 200)
        #expect(refunded.body == "applied\n", "\(refunded.body)")
        let after = try #require(try membership("user_r"))
        #expect(after.isActive == false)
        #expect(after.revokedAt != nil)
        #expect(try stripe.state()["list_requests"] as? Int == 1)
        // A later event of the refunded period (the merchant cancels too) changes nothing, and says why. (A
        // later paid period gives access again: StripeRefundThenPaymentTests.)
        let later = StripeFixtures.subscriptionEvent(
            "evt_r2", created: start + 120, subscription: "sub_r", periodEnd: start + 30 * 86_400, user: "user_r", cancelAtPeriodEnd: true,
            latestInvoice: "in_r1"
        )
        let ignored = try deliver(later, to: stores)
        #expect(ignored.body.hasPrefix("ignored: the membership of this purchase is revoked"), "\(ignored.body)")
        // A payment intent that paid no invoice (not a subscription's) refunds nothing, said so.
        let other = try deliver(StripeFixtures.basilRefundEvent("evt_o", created: start + 70, paymentIntent: "pi_other", charge: "ch_o"), to: stores)
        #expect(other.status == 200)
        #expect(other.body.hasPrefix("ignored: charge ch_o paid no invoice"), "\(other.body)")
    }

    @Test func aChargeRefundedInPartLeavesAccess() throws {
        let stores = try receiver()
        let start = StripeFixtures.now - 3600
        try subscribe("user_p", subscription: "sub_p", invoice: "in_p1", at: start, to: stores)
        let partial = try deliver(StripeFixtures.refundEvent("evt_p", created: start + 60, invoice: "in_p1", refunded: false), to: stores)
        #expect(partial.status == 200)
        #expect(partial.body.hasPrefix("ignored: charge ch_1 is refunded in part only"), "\(partial.body)")
        #expect(try membership("user_p")?.isActive == true)
    }

    @Test func stripeFailingOrNoAPIKeyIsA503AndTheRedeliveryApplies() throws {
        let start = StripeFixtures.now - 3600
        let refund = StripeFixtures.basilRefundEvent("evt_f", created: start + 60, paymentIntent: "pi_f1")
        try stripe.set(["payments": ["pi_f1": "in_f1"]])

        let keyless = try receiver(apiKey: nil)
        try subscribe("user_f", subscription: "sub_f", invoice: "in_f1", at: start, to: keyless)
        let withoutKey = try deliver(refund, to: keyless)
        #expect(withoutKey.status == 503)
        #expect(withoutKey.body.contains("--stripe-api-key-file"), "\(withoutKey.body)")

        let stores = try receiver()
        for failure in [429, 500] {
            try stripe.set(["fail": failure])
            let failed = try deliver(refund, to: stores)
            #expect(failed.status == 503, "\(failure): \(failed.body)")
            #expect(failed.body.contains("the Stripe API") && failed.body.contains("answered \(failure)"), "\(failed.body)")
        }
        let wrongKey = try receiver(apiKey: "sk_test_revoked")
        try stripe.set(["fail": NSNull()])
        #expect(try deliver(refund, to: wrongKey).status == 503)
        #expect(try membership("user_f")?.isActive == true)

        // Stripe's next delivery, once it answers.
        let applied = try deliver(refund, to: stores)
        #expect(applied.body == "applied\n", "\(applied.body)")
        #expect(try membership("user_f")?.isActive == false)
    }

    @Test func aRefundBeforeItsSubscriptionIsGrantedIsKeptAndAppliedOnceItIs() throws {
        let stores = try receiver()
        let start = StripeFixtures.now - 3600
        try stripe.set(["payments": ["pi_k1": "in_k1"]])
        let kept = try deliver(StripeFixtures.basilRefundEvent("evt_k", created: start + 60, paymentIntent: "pi_k1"), to: stores)
        #expect(kept.status == 200)
        #expect(kept.body.contains("kept until a grant names original transaction in_k1"), "\(kept.body)")
        try subscribe("user_k", subscription: "sub_k", invoice: "in_k1", at: start, to: stores)
        var current = try membership("user_k")
        for _ in 0..<300 where current?.revokedAt == nil {
            Thread.sleep(forTimeInterval: 0.1)
            current = try membership("user_k")
        }
        #expect(current?.revokedAt != nil, "the kept refund was not applied")
        #expect(current?.isActive == false)
    }
}
