import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Every `notificationType` of a subscription's real-time developer notification
/// (https://developer.android.com/google/play/billing/rtdn-reference#sub): the receiver reads the
/// subscription's state from `purchases.subscriptionsv2.get` whatever the type, and the state decides; only
/// `SUBSCRIPTION_REVOKED` (12) says more than the state (`EXPIRED`): a refund.
extension GoogleNotificationTests {
    func notify(_ id: String, type: Int, token: String, at time: Int64) throws -> HTTPReply {
        let notification = ["subscriptionNotification": ["version": "1.0", "notificationType": type, "purchaseToken": token, "subscriptionId": "premium_monthly"]]
        return try push(id, notification, eventTime: time, token: try pushToken())
    }

    func subscription(of user: String) throws -> MembershipInfo? {
        try client.send(.memberships(user: user)).memberships?.first
    }

    @Test func aSubscriptionsEveryNotificationTypeBringsItsMembershipToItsState() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        func state(_ name: String, expiry: String, autoRenew: Bool = true, order: String = "GPA.2000-0000-0000-00001") throws {
            try google.set(["subscriptions": ["token-l": Self.subscription(name, order: order, expiry: expiry, autoRenew: autoRenew)]])
        }
        // SUBSCRIPTION_PURCHASED (4)
        try state("SUBSCRIPTION_STATE_ACTIVE", expiry: "2099-01-01T00:00:00Z")
        #expect(try notify("l-4", type: 4, token: "token-l", at: start).body == "applied\n")
        #expect(try subscription(of: "user_g")?.isActive == true)
        // SUBSCRIPTION_IN_GRACE_PERIOD (6): a billing issue, access until the grace's end.
        try state("SUBSCRIPTION_STATE_IN_GRACE_PERIOD", expiry: "2099-01-08T00:00:00Z")
        #expect(try notify("l-6", type: 6, token: "token-l", at: start + 1000).status == 200)
        var current = try #require(try subscription(of: "user_g"))
        #expect(current.billingIssueDetectedAt != nil)
        #expect(current.isActive)
        // SUBSCRIPTION_RECOVERED (1): paid after all, a new order and period.
        try state("SUBSCRIPTION_STATE_ACTIVE", expiry: "2099-02-01T00:00:00Z", order: "GPA.2000-0000-0000-00001..0")
        #expect(try notify("l-1", type: 1, token: "token-l", at: start + 2000).status == 200)
        current = try #require(try subscription(of: "user_g"))
        #expect(current.billingIssueDetectedAt == nil)
        #expect(current.expiresAt == "2099-02-01T00:00:00Z")
        // SUBSCRIPTION_CANCELED (3): access until the end, no renewal; SUBSCRIPTION_RESTARTED (7): renews again.
        try state("SUBSCRIPTION_STATE_CANCELED", expiry: "2099-02-01T00:00:00Z", autoRenew: false, order: "GPA.2000-0000-0000-00001..0")
        #expect(try notify("l-3", type: 3, token: "token-l", at: start + 3000).status == 200)
        #expect(try subscription(of: "user_g")?.willRenew == false)
        try state("SUBSCRIPTION_STATE_ACTIVE", expiry: "2099-02-01T00:00:00Z", order: "GPA.2000-0000-0000-00001..0")
        #expect(try notify("l-7", type: 7, token: "token-l", at: start + 4000).status == 200)
        #expect(try subscription(of: "user_g")?.willRenew == true)
        // SUBSCRIPTION_PAUSED (10): no access while paused; back to ACTIVE: resumed.
        try state("SUBSCRIPTION_STATE_PAUSED", expiry: "2099-02-01T00:00:00Z", order: "GPA.2000-0000-0000-00001..0")
        #expect(try notify("l-10", type: 10, token: "token-l", at: start + 5000).status == 200)
        current = try #require(try subscription(of: "user_g"))
        #expect(current.pausedAt != nil)
        #expect(!current.isActive)
        try state("SUBSCRIPTION_STATE_ACTIVE", expiry: "2099-03-01T00:00:00Z", order: "GPA.2000-0000-0000-00001..1")
        #expect(try notify("l-2", type: 2, token: "token-l", at: start + 6000).status == 200)
        current = try #require(try subscription(of: "user_g"))
        #expect(current.pausedAt == nil)
        #expect(current.isActive)
        // SUBSCRIPTION_REVOKED (12): the state reads EXPIRED; it is a refund, access ends now.
        try state("SUBSCRIPTION_STATE_EXPIRED", expiry: "2099-03-01T00:00:00Z", autoRenew: false, order: "GPA.2000-0000-0000-00001..1")
        #expect(try notify("l-12", type: 12, token: "token-l", at: start + 7000).body == "applied\n")
        current = try #require(try subscription(of: "user_g"))
        #expect(current.revokedAt != nil)
        #expect(!current.isActive)
    }

    @Test func anExpiredOneExpiresAndACanceledPendingOneGrantsNothing() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        var expired = Self.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.3000-0000-0000-00001", expiry: "2099-01-01T00:00:00Z")
        try google.set(["subscriptions": ["token-e": expired]])
        #expect(try notify("e-4", type: 4, token: "token-e", at: start).status == 200)
        // SUBSCRIPTION_EXPIRED (13)
        expired["subscriptionState"] = "SUBSCRIPTION_STATE_EXPIRED"
        try google.set(["subscriptions": ["token-e": expired]])
        #expect(try notify("e-13", type: 13, token: "token-e", at: start + 1000).status == 200)
        let current = try #require(try subscription(of: "user_g"))
        #expect(current.status == "expired")
        #expect(current.revokedAt == nil)
        // SUBSCRIPTION_PENDING_PURCHASE_CANCELED (20): never paid.
        var canceled = Self.subscription("SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED", order: "GPA.3000-0000-0000-00002", expiry: "2099-01-01T00:00:00Z")
        canceled["externalAccountIdentifiers"] = ["obfuscatedExternalAccountId": "user_never"]
        try google.set(["subscriptions": ["token-c": canceled]])
        let reply = try notify("c-20", type: 20, token: "token-c", at: start + 2000)
        #expect(reply.body.hasPrefix("ignored: the pending purchase was canceled"), "\(reply.body)")
        #expect(try client.send(.memberships(user: "user_never")).memberships == [])
    }

    @Test func aPlayAPIOverQuotaOrFailingIsA503AndTheRedeliveryApplies() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        try google.set(["subscriptions": ["token-q": Self.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.4000-0000-0000-00001", expiry: "2099-01-01T00:00:00Z")]])
        for failure in [429, 503] as [Any] {
            try google.set(["fail": failure])
            let reply = try notify("q-4", type: 4, token: "token-q", at: start)
            #expect(reply.status == 503, "\(failure): \(reply.body)")
        }
        #expect(try subscription(of: "user_g") == nil)
        try google.set(["fail": false])
        #expect(try notify("q-4", type: 4, token: "token-q", at: start).body == "applied\n")
    }

    @Test func aPlanChangeMovesTheMembershipToTheNewPurchaseAndTheReplacedOneNoLongerEndsIt() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        let monthly = Self.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.5000-0000-0000-00001", expiry: "2099-01-01T00:00:00Z")
        try google.set(["subscriptions": ["token-u1": monthly]])
        #expect(try notify("u-1", type: 4, token: "token-u1", at: start).body == "applied\n")
        // Upgraded to the yearly product: a new purchase token linked to the old one, with its own order.
        var yearly = Self.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.5000-0000-0000-00002", expiry: "2099-12-01T00:00:00Z", product: "premium_yearly")
        yearly["linkedPurchaseToken"] = "token-u1"
        var replaced = monthly
        replaced["subscriptionState"] = "SUBSCRIPTION_STATE_EXPIRED"
        try google.set(["subscriptions": ["token-u1": replaced, "token-u2": yearly]])
        #expect(try notify("u-2", type: 4, token: "token-u2", at: start + 1000).body == "applied\n")
        var current = try #require(try subscription(of: "user_g"))
        #expect(current.productId == "premium_yearly")
        #expect(current.expiresAt == "2099-12-01T00:00:00Z")
        // The replaced purchase's own notification no longer ends the access the new one pays for.
        let old = try notify("u-3", type: 13, token: "token-u1", at: start + 2000)
        #expect(old.body.hasPrefix("ignored: purchase token token-u1 was replaced"), "\(old.body)")
        current = try #require(try subscription(of: "user_g"))
        #expect(current.isActive)
        #expect(current.productId == "premium_yearly")
        // The new purchase renews the same membership.
        var renewed = yearly
        renewed["latestOrderId"] = "GPA.5000-0000-0000-00002..0"
        renewed["lineItems"] = [["productId": "premium_yearly", "expiryTime": "2100-12-01T00:00:00Z", "autoRenewingPlan": ["autoRenewEnabled": true]]]
        try google.set(["subscriptions": ["token-u1": replaced, "token-u2": renewed]])
        #expect(try notify("u-4", type: 2, token: "token-u2", at: start + 3000).body == "applied\n")
        #expect(try subscription(of: "user_g")?.expiresAt == "2100-12-01T00:00:00Z")
        #expect(try client.send(.memberships(user: "user_g")).memberships?.count == 1)
    }
}
