import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// The sequences a real App Store subscription goes through, one test each, as Apple documents the
/// notifications of each (https://developer.apple.com/documentation/appstoreservernotifications/notificationtype
/// and .../subtype). STORES.md's table names the test of every notification type.
extension AppleNotificationTests {
    static let day: Int64 = 86_400_000

    /// A purchase of `product` until `expires`, signed at `at`: the membership it creates.
    @discardableResult
    func subscribe(_ id: String, product: String = "premium.monthly", expires: Int64, at: Int64) throws -> MembershipInfo {
        let body = apple.notification(
            "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "buy-\(id)", signedDate: at,
            transaction: AppleFixtures.transaction(id, original: id, product: product, expires: expires), renewal: ["autoRenewStatus": 1]
        )
        #expect(try deliver(body).body == "applied\n")
        return try #require(try current())
    }

    func expiry(_ membership: MembershipInfo?) -> Int64? {
        membership?.expiresAt.flatMap(ProtocolTime.milliseconds)
    }

    @Test func anUpgradeToTheYearlyProductTakesEffectAtOnceWithItsYearOfAccess() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        let monthly = try subscribe("8100000001", expires: start + 30 * Self.day, at: start)
        // Apple: "The upgrade goes into effect immediately, starting a new billing period"; the
        // transaction is the new one, of the yearly product, in the same subscription (same original).
        let yearEnd = start + 1000 + 365 * Self.day
        let upgrade = apple.notification(
            "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", uuid: "up-1", signedDate: start + 1000,
            transaction: AppleFixtures.transaction("8100000002", original: "8100000001", product: "premium.yearly", expires: yearEnd),
            renewal: ["autoRenewStatus": 1, "autoRenewProductId": "premium.yearly"]
        )
        #expect(try deliver(upgrade).body == "applied\n")
        let upgraded = try #require(try current())
        #expect(upgraded.id == monthly.id)
        #expect(upgraded.productId == "premium.yearly")
        #expect(expiry(upgraded) == yearEnd)
        #expect(upgraded.transactions.map(\.id) == ["8100000001", "8100000002"])
        #expect(try client.send(.check(user: Self.user, product: "premium.yearly", at: ProtocolTime.string(milliseconds: start + 300 * Self.day))).body["active"]?.boolValue == true)
        #expect(try deliver(upgrade).body == "duplicate\n")
        #expect(try client.send(.memberships(user: Self.user)).memberships?.count == 1)
    }

    @Test func aDowngradeChangesNothingUntilTheRenewalThenMovesToTheCheaperProduct() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        let yearEnd = start + 365 * Self.day
        let yearly = try subscribe("8200000001", product: "premium.yearly", expires: yearEnd, at: start)
        let current = AppleFixtures.transaction("8200000001", original: "8200000001", product: "premium.yearly", expires: yearEnd)
        // Apple: "Downgrades take effect at the next renewal date and don't affect the currently active plan."
        let downgrade = try deliver(apple.notification(
            "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", uuid: "down-1", signedDate: start + 1000, transaction: current,
            renewal: ["autoRenewStatus": 1, "autoRenewProductId": "premium.monthly"]
        ))
        #expect(downgrade.status == 200)
        #expect(downgrade.body.hasPrefix("ignored: a downgrade"))
        var membership = try #require(try self.current())
        #expect(membership.productId == "premium.yearly")
        #expect(expiry(membership) == yearEnd)
        // The renewal, a year on: its transaction is the cheaper product's.
        let monthEnd = yearEnd + 30 * Self.day
        let renewed = apple.notification(
            "DID_RENEW", uuid: "down-2", signedDate: start + 2000,
            transaction: AppleFixtures.transaction("8200000002", original: "8200000001", product: "premium.monthly", expires: monthEnd)
        )
        #expect(try deliver(renewed).body == "applied\n")
        membership = try #require(try self.current())
        #expect(membership.id == yearly.id)
        #expect(membership.productId == "premium.monthly")
        #expect(expiry(membership) == monthEnd)
        #expect(membership.renewsCount == 1)
        #expect(try client.send(.history(user: Self.user)).history?.map(\.action) == ["renewal", "product_change", "grant"])
    }

    @Test func aDowngradeTakenBackKeepsTheProductAtTheRenewal() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        let yearEnd = start + 365 * Self.day
        try subscribe("8300000001", product: "premium.yearly", expires: yearEnd, at: start)
        let current = AppleFixtures.transaction("8300000001", original: "8300000001", product: "premium.yearly", expires: yearEnd)
        #expect(try deliver(apple.notification("DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", uuid: "back-1", signedDate: start + 1000, transaction: current)).status == 200)
        // "If the subtype is empty, the user changed their renewal preference back to the current subscription."
        let back = try deliver(apple.notification("DID_CHANGE_RENEWAL_PREF", uuid: "back-2", signedDate: start + 2000, transaction: current))
        #expect(back.body.hasPrefix("ignored: the renewal preference went back"))
        let renewed = apple.notification(
            "DID_RENEW", uuid: "back-3", signedDate: start + 3000,
            transaction: AppleFixtures.transaction("8300000002", original: "8300000001", product: "premium.yearly", expires: yearEnd + 365 * Self.day)
        )
        #expect(try deliver(renewed).body == "applied\n")
        let membership = try #require(try self.current())
        #expect(membership.productId == "premium.yearly")
        #expect(expiry(membership) == yearEnd + 365 * Self.day)
    }

    @Test func aCrossgradeOfTheSameDurationTakesEffectAtOnceAndOfAnotherDurationAtTheRenewal() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        try subscribe("8400000001", expires: start + 30 * Self.day, at: start)
        // Same duration: Apple sends UPGRADE ("cross-graded to a subscription with the same duration"),
        // a new period from now.
        let familyEnd = start + 1000 + 30 * Self.day
        let same = apple.notification(
            "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", uuid: "cross-1", signedDate: start + 1000,
            transaction: AppleFixtures.transaction("8400000002", original: "8400000001", product: "family.monthly", expires: familyEnd)
        )
        #expect(try deliver(same).body == "applied\n")
        var membership = try #require(try current())
        #expect(membership.productId == "family.monthly")
        #expect(expiry(membership) == familyEnd)
        // Another duration: DOWNGRADE, at the next renewal.
        let current = AppleFixtures.transaction("8400000002", original: "8400000001", product: "family.monthly", expires: familyEnd)
        let other = try deliver(apple.notification("DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", uuid: "cross-2", signedDate: start + 2000, transaction: current))
        #expect(other.body.hasPrefix("ignored: a downgrade"))
        #expect(try self.current()?.productId == "family.monthly")
        let renewed = apple.notification(
            "DID_RENEW", uuid: "cross-3", signedDate: start + 3000,
            transaction: AppleFixtures.transaction("8400000003", original: "8400000001", product: "family.yearly", expires: familyEnd + 365 * Self.day)
        )
        #expect(try deliver(renewed).body == "applied\n")
        membership = try #require(try self.current())
        #expect(membership.productId == "family.yearly")
        #expect(expiry(membership) == familyEnd + 365 * Self.day)
    }

    @Test func aCancelledSubscriptionExpiresAndAResubscriptionToAnotherProductRestoresIt() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        let first = try subscribe("8500000001", expires: start + 30 * Self.day, at: start)
        let current = AppleFixtures.transaction("8500000001", original: "8500000001", expires: start + 30 * Self.day)
        #expect(try deliver(apple.notification("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "re-1", signedDate: start + 1000, transaction: current)).body == "applied\n")
        #expect(try self.current()?.status == "canceled")
        // Turned back on, then off again.
        #expect(try deliver(apple.notification("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", uuid: "re-1b", signedDate: start + 1100, transaction: current)).body == "applied\n")
        #expect(try self.current()?.willRenew == true)
        #expect(try deliver(apple.notification("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "re-1c", signedDate: start + 1200, transaction: current)).body == "applied\n")
        #expect(try self.current()?.status == "canceled")
        #expect(try deliver(apple.notification("EXPIRED", subtype: "VOLUNTARY", uuid: "re-2", signedDate: start + 2000, transaction: current)).body == "applied\n")
        #expect(try self.current()?.isActive == false)
        // "RESUBSCRIBE: the user resubscribed ... to another subscription within the same subscription group."
        let yearEnd = start + 3000 + 365 * Self.day
        let resubscribed = apple.notification(
            "SUBSCRIBED", subtype: "RESUBSCRIBE", uuid: "re-3", signedDate: start + 3000,
            transaction: AppleFixtures.transaction("8500000002", original: "8500000001", product: "premium.yearly", expires: yearEnd),
            renewal: ["autoRenewStatus": 1]
        )
        #expect(try deliver(resubscribed).body == "applied\n")
        let membership = try #require(try self.current())
        #expect(membership.id == first.id)
        #expect(membership.isActive)
        #expect(membership.willRenew)
        #expect(membership.productId == "premium.yearly")
        #expect(expiry(membership) == yearEnd)
    }

    @Test func aBillingRetryWithoutGraceEndsAccessAndTheRecoveryRestoresIt() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        // A period that ended a minute ago: no grace period, so access ends with it.
        let ended = start + 540_000
        try subscribe("8600000001", expires: ended, at: start)
        let current = AppleFixtures.transaction("8600000001", original: "8600000001", expires: ended)
        #expect(try deliver(apple.notification("DID_FAIL_TO_RENEW", uuid: "retry-1", signedDate: start + 1000, transaction: current)).body == "applied\n")
        var membership = try #require(try self.current())
        #expect(membership.renewState == "billing_issue")
        #expect(membership.gracePeriodExpiresAt == nil)
        #expect(membership.isActive == false)
        // DID_RENEW with BILLING_RECOVERY: "the expired subscription that previously failed to renew has successfully renewed".
        let recovered = apple.notification(
            "DID_RENEW", subtype: "BILLING_RECOVERY", uuid: "retry-2", signedDate: start + 2000,
            transaction: AppleFixtures.transaction("8600000002", original: "8600000001", expires: start + 30 * Self.day)
        )
        #expect(try deliver(recovered).body == "applied\n")
        membership = try #require(try self.current())
        #expect(membership.isActive)
        #expect(membership.billingIssueDetectedAt == nil)
        #expect(membership.renewState == "will_renew")
    }

    @Test func aRenewalExtendedMovesTheExpiryAndAMassExtensionsSummaryOrFailureChangesNothing() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        let end = start + 30 * Self.day
        try subscribe("8700000001", expires: end, at: start)
        // RENEWAL_EXTENDED: "the App Store extended the subscription renewal date for a specific
        // subscription"; the transaction's expiresDate is the new date.
        let extended = apple.notification(
            "RENEWAL_EXTENDED", uuid: "ext-1", signedDate: start + 1000,
            transaction: AppleFixtures.transaction("8700000001", original: "8700000001", expires: end + 7 * Self.day)
        )
        #expect(try deliver(extended).body == "applied\n")
        #expect(expiry(try current()) == end + 7 * Self.day)
        #expect(try deliver(extended).body == "duplicate\n")
        #expect(try current()?.renewsCount == 0)
        // RENEWAL_EXTENSION/FAILURE: "the renewal date extension didn't succeed for a specific subscription".
        let failed = try deliver(apple.notification(
            "RENEWAL_EXTENSION", subtype: "FAILURE", uuid: "ext-2", signedDate: start + 2000,
            transaction: AppleFixtures.transaction("8700000001", original: "8700000001", expires: end + 7 * Self.day)
        ))
        #expect(failed.body.hasPrefix("ignored: Apple could not extend"))
        // RENEWAL_EXTENSION/SUMMARY: a `summary` in place of `data`, no transaction.
        let summary = try deliver(apple.notification(
            "RENEWAL_EXTENSION", subtype: "SUMMARY", uuid: "ext-3", signedDate: start + 3000, container: "summary",
            fields: ["requestIdentifier": "outage-2026-12", "productId": "premium.monthly", "succeededCount": 1, "failedCount": 1]
        ))
        #expect(summary.status == 200)
        #expect(summary.body.hasPrefix("ignored: the summary of a mass renewal-date extension"))
        #expect(expiry(try current()) == end + 7 * Self.day)
        #expect(try client.send(.history(user: Self.user)).history?.map(\.action) == ["extension", "grant"])
    }

    @Test func familySharingRevokedEndsTheSharedAccess() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        var shared = AppleFixtures.transaction("8800000001", original: "8800000001", expires: start + 30 * Self.day)
        shared["inAppOwnershipType"] = "FAMILY_SHARED"
        #expect(try deliver(apple.notification("SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "fam-1", signedDate: start, transaction: shared)).body == "applied\n")
        #expect(try current()?.isActive == true)
        // REVOKE: "an in-app purchase the customer was entitled to through Family Sharing is no longer available through sharing".
        #expect(try deliver(apple.notification("REVOKE", uuid: "fam-2", signedDate: start + 1000, transaction: shared)).body == "applied\n")
        let membership = try #require(try current())
        #expect(membership.isActive == false)
        #expect(membership.status == "revoked")
    }

    @Test func aPriceIncreaseChangesNothingUntilItExpiresTheSubscriptionWithoutConsent() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        try subscribe("8900000001", expires: start + 30 * Self.day, at: start)
        let current = AppleFixtures.transaction("8900000001", original: "8900000001", expires: start + 30 * Self.day)
        for (uuid, subtype) in [("price-1", "PENDING"), ("price-2", "ACCEPTED")] {
            let reply = try deliver(apple.notification("PRICE_INCREASE", subtype: subtype, uuid: uuid, signedDate: start + 1000, transaction: current))
            #expect(reply.status == 200)
            #expect(reply.body.hasPrefix("ignored: a price increase"))
        }
        #expect(try self.current()?.isActive == true)
        #expect(try self.current()?.willRenew == true)
        // "EXPIRED/PRICE_INCREASE: the subscription expired because the customer didn't consent to a price increase."
        #expect(try deliver(apple.notification("EXPIRED", subtype: "PRICE_INCREASE", uuid: "price-3", signedDate: start + 2000, transaction: current)).body == "applied\n")
        #expect(try self.current()?.isActive == false)
    }

    @Test func aRefundRequestOrADeclinedRefundChangesNothing() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        try subscribe("9000000001", expires: start + 30 * Self.day, at: start)
        let current = AppleFixtures.transaction("9000000001", original: "9000000001", expires: start + 30 * Self.day)
        let requested = try deliver(apple.notification(
            "CONSUMPTION_REQUEST", uuid: "rr-1", signedDate: start + 1000, transaction: current, fields: ["consumptionRequestReason": "UNINTENDED_PURCHASE"]
        ))
        #expect(requested.body.hasPrefix("ignored: Apple asks for consumption data"))
        let declined = try deliver(apple.notification("REFUND_DECLINED", uuid: "rr-2", signedDate: start + 2000, transaction: current))
        #expect(declined.body.hasPrefix("ignored: Apple declined the customer's refund request"))
        #expect(try self.current()?.status == "active")
        #expect(try client.send(.history(user: Self.user)).history?.map(\.action) == ["grant"])
    }

    @Test func anOfferRedeemedForAnUpgradeTakesEffectAtOnceAndForADowngradeAtTheRenewal() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        try subscribe("9100000001", expires: start + 30 * Self.day, at: start)
        // OFFER_REDEEMED/UPGRADE: "the customer redeemed a promotional offer or offer code to upgrade their
        // active subscription. The upgrade goes into effect immediately."
        let yearEnd = start + 1000 + 365 * Self.day
        let upgrade = apple.notification(
            "OFFER_REDEEMED", subtype: "UPGRADE", uuid: "offer-1", signedDate: start + 1000,
            transaction: AppleFixtures.transaction("9100000002", original: "9100000001", product: "premium.yearly", expires: yearEnd)
        )
        #expect(try deliver(upgrade).body == "applied\n")
        #expect(try current()?.productId == "premium.yearly")
        #expect(expiry(try current()) == yearEnd)
        // OFFER_REDEEMED/DOWNGRADE: "The downgrade goes into effect at the next renewal date."
        let current = AppleFixtures.transaction("9100000002", original: "9100000001", product: "premium.yearly", expires: yearEnd)
        let downgrade = try deliver(apple.notification("OFFER_REDEEMED", subtype: "DOWNGRADE", uuid: "offer-2", signedDate: start + 2000, transaction: current))
        #expect(downgrade.body.hasPrefix("ignored: an offer redeemed for a downgrade"))
        #expect(try self.current()?.productId == "premium.yearly")
    }

    @Test func aReversedRefundGivesBackTheAccessTheRefundTook() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        let end = start + 30 * Self.day
        try subscribe("9200000001", expires: end, at: start)
        let current = AppleFixtures.transaction("9200000001", original: "9200000001", expires: end)
        #expect(try deliver(apple.notification("REFUND", uuid: "rev-1", signedDate: start + 1000, transaction: current)).body == "applied\n")
        #expect(try self.current()?.status == "revoked")
        #expect(try client.send(.check(user: Self.user, product: "premium.monthly")).body["active"]?.boolValue == false)
        // REFUND_REVERSED: "If your app revoked content or services as a result of the related refund, it
        // needs to reinstate them."
        let reversal = apple.notification("REFUND_REVERSED", uuid: "rev-2", signedDate: start + 2000, transaction: current)
        #expect(try deliver(reversal).body == "applied\n")
        let membership = try #require(try self.current())
        #expect(membership.isActive)
        #expect(membership.revokedAt == nil)
        #expect(expiry(membership) == end)
        #expect(membership.transactions.first?.revokedAt == nil)
        #expect(try client.send(.check(user: Self.user, product: "premium.monthly")).body["active"]?.boolValue == true)
        #expect(try deliver(reversal).body == "duplicate\n")
        #expect(try client.send(.history(user: Self.user)).history?.map(\.action) == ["refund_reversal", "refund", "grant"])
        // Back to a subscription like any other: a later refund revokes it again.
        #expect(try deliver(apple.notification("REFUND", uuid: "rev-3", signedDate: start + 3000, transaction: current)).body == "applied\n")
        #expect(try self.current()?.status == "revoked")
    }

    @Test func anExternalPurchaseTokenARescindedConsentOrAnUnknownTypeIsAnsweredAndChangesNothing() throws {
        let now = AppleFixtures.nowMilliseconds - 60_000
        // Its payload carries `externalPurchaseToken` in place of `data`.
        let reply = try deliver(apple.notification(
            "EXTERNAL_PURCHASE_TOKEN", subtype: "UNREPORTED", uuid: "ept-1", signedDate: now, container: "externalPurchaseToken",
            fields: ["externalPurchaseId": "b2158121-7af9-49d4-9561-1f588205523e", "tokenCreationDate": now, "appAppleId": 55555]
        ))
        #expect(reply.status == 200)
        #expect(reply.body.hasPrefix("ignored: an External Purchase API token"))
        // RESCIND_CONSENT carries `appData`, no transaction.
        let rescinded = try deliver(apple.notification("RESCIND_CONSENT", uuid: "ept-2", signedDate: now, container: "appData", fields: ["appAppleId": 55555]))
        #expect(rescinded.status == 200)
        #expect(rescinded.body.hasPrefix("ignored: RESCIND_CONSENT carries no transaction"))
        // A type Apple adds later, for a purchase the membership holds: answered, so Apple does not deliver it
        // again for days, and changes nothing.
        let subscribed = try deliver(apple.notification(
            "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "ept-3", signedDate: now,
            transaction: AppleFixtures.transaction("9300000001", original: "9300000001", expires: now + 30 * Self.day)
        ))
        #expect(subscribed.status == 200)
        let before = try current()
        #expect(before != nil)
        let later = try deliver(apple.notification(
            "A_TYPE_APPLE_ADDS_LATER", uuid: "ept-4", signedDate: now + 1000,
            transaction: AppleFixtures.transaction("9300000001", original: "9300000001", expires: now + 60 * Self.day)
        ))
        #expect(later.status == 200)
        #expect(later.body.hasPrefix("ignored: App Store notification type A_TYPE_APPLE_ADDS_LATER is not one this receiver acts on"), "\(later.body)")
        #expect(try current() == before)
    }
}
