import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Google refunds a purchase not acknowledged within three days
/// (https://developer.android.com/google/play/billing/integrate#process). A purchase the receiver grants, from
/// its notification alone or at purchase time, is acknowledged after the grant, exactly once; an
/// acknowledgement that fails keeps the grant and is made by the next try.
extension GoogleNotificationTests {
    /// The purchase tokens the Play API stand-in acknowledged, in order.
    func acknowledgedTokens() throws -> [String] {
        try google.state()["acknowledged_tokens"] as? [String] ?? []
    }

    /// A subscription of `user` whose acknowledgement Google still waits for.
    static func unacknowledged(order: String, user: String?) -> [String: Any] {
        var purchase = subscription("SUBSCRIPTION_STATE_ACTIVE", order: order, expiry: "2099-05-01T00:00:00Z")
        purchase["acknowledgementState"] = "ACKNOWLEDGEMENT_STATE_PENDING"
        purchase["externalAccountIdentifiers"] = user.map { ["obfuscatedExternalAccountId": $0] }
        return purchase
    }

    /// A one-time purchase of `user`, not acknowledged yet (`acknowledgementState` 0).
    static func unacknowledgedProduct(order: String, user: String?) -> [String: Any] {
        var purchase: [String: Any] = [
            "kind": "androidpublisher#productPurchase", "purchaseState": 0, "consumptionState": 0, "orderId": order,
            "purchaseTimeMillis": "1764806400000", "acknowledgementState": 0,
        ]
        purchase["obfuscatedExternalAccountId"] = user
        return purchase
    }

    func grants(of user: String) throws -> Int {
        try client.send(.history(user: user)).history?.filter { $0.action == "grant" }.count ?? -1
    }

    @Test func aPurchaseGrantedFromItsNotificationAloneIsAcknowledgedExactlyOnce() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        try google.set([
            "subscriptions": [
                "token-n1": Self.unacknowledged(order: "GPA.6100-0000-0000-00001", user: "user_n"),
                "token-n0": Self.unacknowledged(order: "GPA.6100-0000-0000-00009", user: nil),
            ],
            "products": ["token-n2": Self.unacknowledgedProduct(order: "GPA.6100-0000-0000-00002", user: "user_n")],
        ])
        #expect(try notify("n-1", type: 4, token: "token-n1", at: start).body == "applied\n")
        #expect(try acknowledgedTokens() == ["token-n1"])
        // Pub/Sub delivering it again: nothing granted, nothing acknowledged twice.
        #expect(try notify("n-1", type: 4, token: "token-n1", at: start).body == "duplicate\n")
        var renewed = Self.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.6100-0000-0000-00001..0", expiry: "2099-06-01T00:00:00Z")
        renewed["externalAccountIdentifiers"] = ["obfuscatedExternalAccountId": "user_n"]
        try google.set(["subscriptions": ["token-n1": renewed, "token-n0": Self.unacknowledged(order: "GPA.6100-0000-0000-00009", user: nil)]])
        #expect(try notify("n-2", type: 2, token: "token-n1", at: start + 1000).body == "applied\n")
        #expect(try acknowledgedTokens() == ["token-n1"])

        // A one-time product, from its ONE_TIME_PRODUCT_PURCHASED alone.
        let bought = ["oneTimeProductNotification": ["version": "1.0", "notificationType": 1, "purchaseToken": "token-n2", "sku": "lifetime_unlock"]]
        #expect(try push("n-3", bought, eventTime: start + 2000, token: try pushToken()).body == "applied\n")
        #expect(try push("n-3", bought, eventTime: start + 2000, token: try pushToken()).body == "duplicate\n")
        #expect(try acknowledgedTokens() == ["token-n1", "token-n2"])
        #expect(try grants(of: "user_n") == 2)

        // A purchase naming no account is granted to nobody yet: acknowledged, it could not be refunded.
        #expect(try notify("n-4", type: 4, token: "token-n0", at: start + 3000).body.hasPrefix("unmatched"))
        #expect(try acknowledgedTokens() == ["token-n1", "token-n2"])
    }

    @Test func anAcknowledgementThatFailsKeepsTheGrantAndPubSubsRedeliveryAcknowledgesIt() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        try google.set([
            "subscriptions": ["token-f1": Self.unacknowledged(order: "GPA.6200-0000-0000-00001", user: "user_f")],
            "products": ["token-f2": Self.unacknowledgedProduct(order: "GPA.6200-0000-0000-00002", user: "user_f")],
        ])
        // Google unavailable, then over its quota, for the one acknowledgement.
        try google.set(["fail_acknowledge": ["status": 503, "count": 1]])
        let failed = try notify("f-1", type: 4, token: "token-f1", at: start)
        #expect(failed.status == 503, "\(failed.body)")
        #expect(failed.body.contains("the purchase is granted, but the Play Developer API did not acknowledge it"), "\(failed.body)")
        // The grant made before it is durable.
        #expect(try subscription(of: "user_f")?.isActive == true)
        #expect(try acknowledgedTokens() == [])
        #expect(try notify("f-1", type: 4, token: "token-f1", at: start).body == "duplicate\n")
        #expect(try acknowledgedTokens() == ["token-f1"])

        try google.set(["fail_acknowledge": ["status": 429, "count": 1]])
        let bought = ["oneTimeProductNotification": ["version": "1.0", "notificationType": 1, "purchaseToken": "token-f2", "sku": "lifetime_unlock"]]
        #expect(try push("f-2", bought, eventTime: start + 1000, token: try pushToken()).status == 503)
        #expect(try client.send(.check(user: "user_f", product: "lifetime_unlock")).body["active"]?.boolValue == true)
        #expect(try push("f-2", bought, eventTime: start + 1000, token: try pushToken()).body == "duplicate\n")
        #expect(try push("f-2", bought, eventTime: start + 1000, token: try pushToken()).body == "duplicate\n")
        #expect(try acknowledgedTokens() == ["token-f1", "token-f2"])
        #expect(try grants(of: "user_f") == 2)
    }

    @Test func anAcknowledgementGoogleWillNeverTakeIsPassedOverAndAnExpiredPurchaseIsNotAcknowledged() throws {
        // A 503 would have Pub/Sub deliver the notification again for days to no end: a 400 is logged and the
        // notification answered as applied; the grant stands.
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        var expired = Self.unacknowledged(order: "GPA.6300-0000-0000-00002", user: "user_e")
        expired["subscriptionState"] = "SUBSCRIPTION_STATE_EXPIRED"
        try google.set([
            "subscriptions": ["token-r1": Self.unacknowledged(order: "GPA.6300-0000-0000-00001", user: "user_r"), "token-e1": expired]
        ])
        try google.set(["fail_acknowledge": ["status": 400, "count": 1]])
        let refused = try notify("r-1", type: 4, token: "token-r1", at: start)
        #expect(refused.status == 200 && refused.body == "applied\n", "\(refused.status) \(refused.body)")
        #expect(try subscription(of: "user_r")?.isActive == true)
        #expect(try acknowledgedTokens() == [])
        // Expired before the receiver heard of it: Google no longer lets it be acknowledged; nothing is asked.
        let lapsed = try notify("e-1", type: 13, token: "token-e1", at: start + 1000)
        #expect(lapsed.status == 200, "\(lapsed.body)")
        #expect(try acknowledgedTokens() == [])
    }

    @Test func aPurchaseReportedAfterItsNotificationGrantsOnceAndAcknowledgesOnlyWhatIsStillPending() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        try google.set([
            "subscriptions": [
                "token-a1": Self.unacknowledged(order: "GPA.6300-0000-0000-00001", user: "user_a"),
                "token-a2": Self.unacknowledged(order: "GPA.6300-0000-0000-00002", user: "user_b"),
            ]
        ])
        // The notification first: granted and acknowledged; the backend's report then grants nothing more.
        #expect(try notify("a-1", type: 4, token: "token-a1", at: start).body == "applied\n")
        let first = try #require(try subscription(of: "user_a"))
        let reported = try reportPurchase(["user": "user_a", "productId": "premium_monthly", "purchaseToken": "token-a1", "type": "subscription"])
        #expect(reported.status == 200, "\(reported.json)")
        #expect((reported.json["membership"] as? [String: Any])?["id"] as? String == first.id)
        #expect((reported.json["membership"] as? [String: Any])?["isActive"] as? Bool == true)
        #expect(try acknowledgedTokens() == ["token-a1"])
        #expect(try grants(of: "user_a") == 1)

        // The notification's acknowledgement failed, and the backend's report comes before Pub/Sub's retry:
        // the report acknowledges it, and the retry finds nothing left to do.
        try google.set(["fail_acknowledge": ["status": 503, "count": 1]])
        #expect(try notify("a-2", type: 4, token: "token-a2", at: start + 1000).status == 503)
        let late = try reportPurchase(["user": "user_b", "productId": "premium_monthly", "purchaseToken": "token-a2", "type": "subscription"])
        #expect(late.status == 200, "\(late.json)")
        #expect(try acknowledgedTokens() == ["token-a1", "token-a2"])
        #expect(try notify("a-2", type: 4, token: "token-a2", at: start + 1000).body == "duplicate\n")
        #expect(try acknowledgedTokens() == ["token-a1", "token-a2"])
        #expect(try grants(of: "user_b") == 1)
    }

    @Test func anAcknowledgementFailingAtPurchaseTimeIs503AndTheRepeatGrantsNothingNewAndAcknowledgesOnce() throws {
        try google.set([
            "subscriptions": ["token-r1": Self.unacknowledged(order: "GPA.6400-0000-0000-00001", user: nil)],
            "products": ["token-r2": Self.unacknowledgedProduct(order: "GPA.6400-0000-0000-00002", user: nil)],
        ])
        let purchases = [
            ["user": "user_r", "productId": "premium_monthly", "purchaseToken": "token-r1", "type": "subscription"],
            ["user": "user_r", "productId": "lifetime_pro", "purchaseToken": "token-r2", "type": "product"],
        ]
        for (fields, failure) in zip(purchases, [503, 429]) {
            try google.set(["fail_acknowledge": ["status": failure, "count": 1]])
            let failed = try reportPurchase(fields)
            #expect(failed.status == 503, "\(failure): \(failed.json)")
            #expect((failed.json["error"] as? [String: Any])?["code"] as? String == "unavailable")
            // Granted before the acknowledgement was tried: the grant stands.
            #expect(try client.send(.memberships(originalTransactionId: fields["purchaseToken"]!)).memberships?.count == 1)
            let repeated = try reportPurchase(fields)
            #expect(repeated.status == 200, "\(failure): \(repeated.json)")
            #expect(try reportPurchase(fields).status == 200)
        }
        #expect(try acknowledgedTokens() == ["token-r1", "token-r2"])
        #expect(try grants(of: "user_r") == 2)
        #expect(try client.send(.memberships(user: "user_r")).memberships?.count == 2)
    }
}
