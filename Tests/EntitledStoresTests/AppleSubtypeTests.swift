import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// The notification subtypes STORES.md's table lists beyond the lifecycle tests, each sent as Apple
/// documents it (https://developer.apple.com/documentation/appstoreservernotifications/notificationtype and
/// .../subtype), through real `entitled` and `entitled-stores` processes.
extension AppleNotificationTests {
    @Test func eachReasonAnExpiryGivesEndsAccess() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        // EXPIRED: VOLUNTARY (renewal turned off), BILLING_RETRY (the retry period ended without a
        // payment), PRODUCT_NOT_FOR_SALE (the product was not for sale at renewal), and none (the subscription
        // "expired for some other reason"). PRICE_INCREASE has its own test.
        for (index, subtype) in [Optional("VOLUNTARY"), "BILLING_RETRY", "PRODUCT_NOT_FOR_SALE", nil].enumerated() {
            let id = "98000000\(index)1"
            let user = "0f4e2c1a-7d5b-4c1e-9a3f-2b6d8e0c4a9\(index)"
            var transaction = AppleFixtures.transaction(id, original: id, expires: start + 30 * Self.day, token: user)
            #expect(try deliver(apple.notification("SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "exp-\(index)-1", signedDate: start, transaction: transaction)).body == "applied\n")
            transaction["expiresDate"] = start + 30 * Self.day
            let reply = try deliver(apple.notification("EXPIRED", subtype: subtype, uuid: "exp-\(index)-2", signedDate: start + 1000, transaction: transaction))
            #expect(reply.body == "applied\n", "EXPIRED/\(subtype ?? "none"): \(reply.body)")
            let membership = try #require(try client.send(.memberships(user: user)).memberships?.first)
            #expect(membership.isActive == false, "EXPIRED/\(subtype ?? "none")")
            #expect(membership.willRenew == false)
            #expect(try client.send(.history(user: user)).history?.map(\.action) == ["expiration", "grant"])
        }
    }

    @Test func aBillingRetryThatEndsWithoutAPaymentExpires() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        let ended = start + 540_000
        try subscribe("9810000001", expires: ended, at: start)
        let current = AppleFixtures.transaction("9810000001", original: "9810000001", expires: ended)
        #expect(try deliver(apple.notification("DID_FAIL_TO_RENEW", uuid: "br-1", signedDate: start + 1000, transaction: current, renewal: ["autoRenewStatus": 1])).body == "applied\n")
        #expect(try self.current()?.renewState == "billing_issue")
        // "EXPIRED/BILLING_RETRY: the subscription expired because the billing retry period ended without a
        // successful billing transaction."
        #expect(try deliver(apple.notification("EXPIRED", subtype: "BILLING_RETRY", uuid: "br-2", signedDate: start + 2000, transaction: current)).body == "applied\n")
        let membership = try #require(try self.current())
        #expect(membership.isActive == false)
        #expect(membership.willRenew == false)
        #expect(try client.send(.history(user: Self.user)).history?.map(\.action) == ["expiration", "billing_issue", "grant"])
    }

    @Test func aRenewalDuringTheGracePeriodEndsTheBillingIssueWithTheNewPeriod() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        let end = start + 540_000
        try subscribe("9820000001", expires: end, at: start)
        let current = AppleFixtures.transaction("9820000001", original: "9820000001", expires: end)
        let graceEnd = end + 16 * Self.day
        let failed = apple.notification(
            "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", uuid: "gr-1", signedDate: start + 1000, transaction: current,
            renewal: ["autoRenewStatus": 1, "gracePeriodExpiresDate": graceEnd]
        )
        #expect(try deliver(failed).body == "applied\n")
        var membership = try #require(try self.current())
        #expect(membership.isActive)  // in the grace period, though its period ended
        #expect(membership.gracePeriodExpiresAt.flatMap(ProtocolTime.milliseconds) == graceEnd)
        // Apple charges within the grace period: DID_RENEW (no BILLING_RECOVERY: the subscription never lapsed).
        let renewed = apple.notification(
            "DID_RENEW", uuid: "gr-2", signedDate: start + 2000,
            transaction: AppleFixtures.transaction("9820000002", original: "9820000001", expires: end + 30 * Self.day), renewal: ["autoRenewStatus": 1]
        )
        #expect(try deliver(renewed).body == "applied\n")
        membership = try #require(try self.current())
        #expect(membership.isActive)
        #expect(membership.billingIssueDetectedAt == nil)
        #expect(membership.gracePeriodExpiresAt == nil)
        #expect(membership.renewState == "will_renew")
        #expect(expiry(membership) == end + 30 * Self.day)
    }

    @Test func anOfferRedeemedAtPurchaseGrantsAndForAResubscriptionStartsANewPeriod() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        // OFFER_REDEEMED/INITIAL_BUY: "the customer redeemed an offer for a first-time purchase".
        let bought = apple.notification(
            "OFFER_REDEEMED", subtype: "INITIAL_BUY", uuid: "or-1", signedDate: start,
            transaction: AppleFixtures.transaction("9830000001", original: "9830000001", expires: start + 7 * Self.day, offerType: 1),
            renewal: ["autoRenewStatus": 1]
        )
        #expect(try deliver(bought).body == "applied\n")
        let first = try #require(try current())
        #expect(first.status == "trialing")
        #expect(first.willRenew)
        let lapsed = AppleFixtures.transaction("9830000001", original: "9830000001", expires: start + 7 * Self.day)
        #expect(try deliver(apple.notification("EXPIRED", subtype: "VOLUNTARY", uuid: "or-2", signedDate: start + 1000, transaction: lapsed)).body == "applied\n")
        #expect(try current()?.isActive == false)
        // OFFER_REDEEMED/RESUBSCRIBE: "the customer redeemed an offer to resubscribe to an inactive subscription".
        let back = apple.notification(
            "OFFER_REDEEMED", subtype: "RESUBSCRIBE", uuid: "or-3", signedDate: start + 2000,
            transaction: AppleFixtures.transaction("9830000002", original: "9830000001", expires: start + 30 * Self.day), renewal: ["autoRenewStatus": 1]
        )
        #expect(try deliver(back).body == "applied\n")
        let membership = try #require(try current())
        #expect(membership.id == first.id)
        #expect(membership.isActive)
        #expect(membership.willRenew)
        #expect(expiry(membership) == start + 30 * Self.day)
        // OFFER_REDEEMED with no subtype: "the customer redeemed an offer for their active subscription", for
        // a later renewal: the transaction is the current period's, which the membership holds.
        let active = AppleFixtures.transaction("9830000002", original: "9830000001", expires: start + 30 * Self.day)
        let offered = try deliver(apple.notification("OFFER_REDEEMED", uuid: "or-4", signedDate: start + 3000, transaction: active, renewal: ["autoRenewStatus": 1]))
        #expect(offered.status == 200)
        #expect(try current() == membership)
        #expect(try client.send(.history(user: Self.user)).history?.map(\.action) == ["renewal", "expiration", "grant"])
    }

    @Test func anExternalTokenCreatedAndTheAdvancedCommerceTypesChangeNothing() throws {
        let now = AppleFixtures.nowMilliseconds - 60_000
        let created = try deliver(apple.notification(
            "EXTERNAL_PURCHASE_TOKEN", subtype: "CREATED", uuid: "ac-1", signedDate: now, container: "externalPurchaseToken",
            fields: ["externalPurchaseId": "c3b6a2e0-0d4f-4a51-9d35-6a1c1f8a2b77", "tokenCreationDate": now, "appAppleId": 55555]
        ))
        #expect(created.body.hasPrefix("ignored: an External Purchase API token"))
        let transaction = AppleFixtures.transaction("9840000001", original: "9840000001", expires: now + 30 * Self.day)
        #expect(try deliver(apple.notification("SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "ac-2", signedDate: now, transaction: transaction)).body == "applied\n")
        let before = try current()
        // The Advanced Commerce API's notifications, for a purchase the membership holds.
        for (index, type) in ["METADATA_UPDATE", "MIGRATION", "PRICE_CHANGE"].enumerated() {
            let reply = try deliver(apple.notification(type, uuid: "ac-\(index + 3)", signedDate: now + 1000, transaction: transaction))
            #expect(reply.status == 200)
            #expect(reply.body.hasPrefix("ignored: \(type) concerns a subscription of the Advanced Commerce API"), "\(reply.body)")
        }
        #expect(try current() == before)
    }
}
