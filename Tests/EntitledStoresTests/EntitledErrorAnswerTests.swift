import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// What a store is told when `entitled` answers with an error (issue #45): only a notification that is itself
/// bad gets a 4xx, which the stores do not deliver again; anything that may succeed later (a server still
/// loading its data, an internal error, a write whose outcome is unknown, a stale read) gets a 503, so that
/// the store delivers it again (Stripe retries for three days, the App Store five more times, Google's
/// Pub/Sub for seven days, Whop three times within a minute), and is not counted as refused. The same on
/// every route: one receiver serves the four stores, each sent a notification it verifies and must apply.
// One test at a time: each runs a receiver and a Google stand-in.
@Suite(.serialized) struct EntitledErrorAnswerTests {
    static let stores = ["apple", "google", "stripe", "whop"]

    /// One valid notification to each store's route of a receiver in front of `entitled`, with the Play
    /// Developer API's stand-in answering for Google; the replies by store, and the metrics after them.
    private func deliver(to entitled: AnsweringEntitled) throws -> (replies: [String: HTTPReply], metrics: String) {
        let files = try TemporaryDirectory()
        let chain = try AppleFixtures.chain()
        let apple = AppleFixtures(chain: chain)
        let rootFile = files.path + "/root.pem"
        try chain.rootPEM.write(toFile: rootFile, atomically: true, encoding: .utf8)
        let google = try StoreStandIn("google_standin")
        try google.set(["subscriptions": ["token-e": GoogleNotificationTests.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.1-2-3-4", expiry: "2099-01-01T00:00:00Z")]])
        let keyFile = files.path + "/service-account.json"
        let key: [String: Any] = [
            "type": "service_account", "project_id": "example-project", "private_key_id": "abc123",
            "private_key": try GoogleNotificationTests.fixtureKey("service-account").pkcs8PEMRepresentation,
            "client_email": "play-reader@example-project.iam.gserviceaccount.com", "token_uri": google.url + "/token",
        ]
        try JSONSerialization.data(withJSONObject: key).write(to: URL(fileURLWithPath: keyFile))
        let stores = try RunningStores(
            entitled: "127.0.0.1:\(entitled.port)",
            environment: ["ENTITLED_STORES_STRIPE_SECRET": StripeFixtures.secret, "ENTITLED_STORES_WHOP_SECRET": WhopNotificationTests.secret],
            arguments: [
                "--apple-root-ca", rootFile, "--apple-bundle-id", AppleFixtures.bundleID, "--google-package", GoogleNotificationTests.package,
                "--google-service-account", keyFile, "--google-api-url", google.url,
            ]
        )
        var replies: [String: HTTPReply] = [:]

        let subscribed = apple.notification(
            "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "e-1", signedDate: AppleFixtures.nowMilliseconds - 60_000,
            transaction: AppleFixtures.transaction("2000000901", original: "2000000901", expires: AppleFixtures.nowMilliseconds + 86_400_000),
            renewal: ["autoRenewStatus": 1]
        )
        replies["apple"] = try stores.post("/apple", body: subscribed, headers: ["Content-Type": "application/json"])

        let developer: [String: Any] = [
            "version": "1.0", "packageName": GoogleNotificationTests.package, "eventTimeMillis": String(AppleFixtures.nowMilliseconds - 60_000),
            "subscriptionNotification": ["version": "1.0", "notificationType": 4, "purchaseToken": "token-e", "subscriptionId": "premium_monthly"],
        ]
        let push = try JSONSerialization.data(withJSONObject: [
            "message": ["data": try JSONSerialization.data(withJSONObject: developer).base64EncodedString(), "messageId": "e-2"],
            "subscription": "projects/example-project/subscriptions/play-notifications",
        ])
        replies["google"] = try stores.post("/google", body: Array(push), headers: ["Content-Type": "application/json"])

        let stripe = StripeFixtures.subscriptionEvent(
            "evt_e", type: "customer.subscription.created", created: StripeFixtures.now - 60, periodEnd: StripeFixtures.now + 86_400, user: "user_e"
        )
        replies["stripe"] = try stores.post("/stripe", body: stripe, headers: StripeFixtures.signed(stripe))

        let whop = WhopNotificationTests.body("membership.activated", data: WhopNotificationTests.membership(periodEnd: "2099-01-01T00:00:00Z"), timestamp: "2026-01-01T00:00:00Z")
        let sent = Int64(Date().timeIntervalSince1970)
        replies["whop"] = try stores.post(
            "/whop", body: whop,
            headers: [
                "webhook-id": "msg_e", "webhook-timestamp": "\(sent)",
                "webhook-signature": StandardWebhookSignature.signature(id: "msg_e", timestamp: sent, body: whop, secret: WhopNotificationTests.secret),
            ]
        )
        return (replies, try stores.get("/metrics").body)
    }

    @Test(arguments: ["loading", "internal", "outcome_unknown", "stale", "busy", "unavailable", "a_code_of_a_newer_server"])
    func anAnswerThatMaySucceedLaterIsA503AndNoRefusal(code: String) throws {
        let entitled = try AnsweringEntitled(answering: code)
        let (replies, metrics) = try deliver(to: entitled)
        for store in Self.stores {
            let reply = try #require(replies[store])
            #expect(reply.status == 503, "\(store): \(reply.body)")
            #expect(reply.body.contains(code), "\(store): \(reply.body)")
            #expect(!metrics.contains(#"entitled_stores_refused_total{store="\#(store)",reason="malformed"}"#), "\(store): \(metrics)")
        }
    }

    @Test(arguments: ["bad_request", "not_found", "too_large"])
    func anAnswerThatTheNotificationItselfIsWrongIsA400(code: String) throws {
        let entitled = try AnsweringEntitled(answering: code)
        let (replies, metrics) = try deliver(to: entitled)
        for store in Self.stores {
            let reply = try #require(replies[store])
            #expect(reply.status == 400, "\(store): \(reply.body)")
            #expect(metrics.contains(#"entitled_stores_refused_total{store="\#(store)",reason="malformed"} 1"#), "\(store): \(metrics)")
        }
    }
}
