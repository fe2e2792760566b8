import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// What a store is told when `entitled` answers with an error (issue #45): only a notification that is itself
/// bad gets a 4xx, which the stores do not deliver again; anything that may succeed later (a server still
/// loading its data, an internal error, a write whose outcome is unknown, a stale read) gets a 503, so that
/// the store delivers it again (Stripe retries for three days, the App Store five more times, Google's
/// Pub/Sub for seven days), and is not counted as refused.
@Suite struct EntitledErrorAnswerTests {
    private func deliver(to entitled: AnsweringEntitled) throws -> (reply: HTTPReply, metrics: String) {
        let stores = try RunningStores(
            entitled: "127.0.0.1:\(entitled.port)", environment: ["ENTITLED_STORES_STRIPE_SECRET": StripeFixtures.secret]
        )
        let body = StripeFixtures.subscriptionEvent(
            "evt_e", type: "customer.subscription.created", created: StripeFixtures.now - 60, periodEnd: StripeFixtures.now + 86_400, user: "user_e"
        )
        let reply = try stores.post("/stripe", body: body, headers: StripeFixtures.signed(body))
        return (reply, try stores.get("/metrics").body)
    }

    @Test(arguments: ["loading", "internal", "outcome_unknown", "stale", "busy", "unavailable", "a_code_of_a_newer_server"])
    func anAnswerThatMaySucceedLaterIsA503AndNoRefusal(code: String) throws {
        let entitled = try AnsweringEntitled(answering: code)
        let (reply, metrics) = try deliver(to: entitled)
        #expect(reply.status == 503, "\(reply.body)")
        #expect(reply.body.contains(code), "\(reply.body)")
        #expect(!metrics.contains(#"entitled_stores_refused_total{store="stripe",reason="malformed"}"#), "\(metrics)")
    }

    @Test(arguments: ["bad_request", "not_found", "too_large"])
    func anAnswerThatTheNotificationItselfIsWrongIsA400(code: String) throws {
        let entitled = try AnsweringEntitled(answering: code)
        let (reply, metrics) = try deliver(to: entitled)
        #expect(reply.status == 400, "\(reply.body)")
        #expect(metrics.contains(#"entitled_stores_refused_total{store="stripe",reason="malformed"} 1"#), "\(metrics)")
    }
}
