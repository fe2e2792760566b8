import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// Refunds of an App Store subscription and what comes after them, through real `entitled` and
/// `entitled-stores` processes: a REFUND carries the refunded transaction, with its `revocationDate`, in
/// `signedTransactionInfo` (https://developer.apple.com/documentation/appstoreservernotifications/notificationtype,
/// REFUND), and Apple keeps the subscription's `originalTransactionId` when the customer pays again.
extension AppleNotificationTests {
    /// `transaction` refunded at `at`, as a REFUND's `signedTransactionInfo` carries it.
    func refunded(_ transaction: [String: Any], at: Int64) -> [String: Any] {
        transaction.merging(["revocationDate": at, "revocationReason": 0]) { $1 }
    }

    @Test func aPeriodPaidAfterARefundGivesAccessAgainAndItsRenewalsFollowIt() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        let first = try subscribe("9400000001", expires: start + 30 * Self.day, at: start)
        let paid = AppleFixtures.transaction("9400000001", original: "9400000001", expires: start + 30 * Self.day)
        #expect(try deliver(apple.notification("REFUND", uuid: "after-1", signedDate: start + 1000, transaction: refunded(paid, at: start + 1000))).body == "applied\n")
        #expect(try current()?.status == "revoked")
        // The customer subscribes again: the same original transaction, a new period paid.
        let yearEnd = start + 2000 + 365 * Self.day
        let resubscribed = apple.notification(
            "SUBSCRIBED", subtype: "RESUBSCRIBE", uuid: "after-2", signedDate: start + 2000,
            transaction: AppleFixtures.transaction("9400000002", original: "9400000001", product: "premium.yearly", expires: yearEnd),
            renewal: ["autoRenewStatus": 1]
        )
        #expect(try deliver(resubscribed).body == "applied\n")
        let again = try #require(try current())
        #expect(again.id != first.id)
        #expect(again.user == Self.user)
        #expect(again.isActive)
        #expect(again.willRenew)
        #expect(again.productId == "premium.yearly")
        #expect(again.transactions.map(\.id) == ["9400000002"])
        #expect(try client.send(.check(user: Self.user, product: "premium.yearly")).body["active"]?.boolValue == true)
        #expect(try deliver(resubscribed).body == "duplicate\n")
        // Its renewal, with the same original transaction, reaches the new membership; the refunded one stays revoked.
        let renewed = apple.notification(
            "DID_RENEW", uuid: "after-3", signedDate: start + 3000,
            transaction: AppleFixtures.transaction("9400000003", original: "9400000001", product: "premium.yearly", expires: yearEnd + 365 * Self.day)
        )
        #expect(try deliver(renewed).body == "applied\n")
        let memberships = try #require(try client.send(.memberships(user: Self.user)).memberships)
        #expect(memberships.count == 2)
        let renewedMembership = try #require(memberships.first { $0.id == again.id })
        #expect(renewedMembership.renewsCount == 1)
        #expect(expiry(renewedMembership) == yearEnd + 365 * Self.day)
        #expect(memberships.first { $0.id == first.id }?.status == "revoked")
        // A cancellation of the new period reaches it too.
        let cancelled = apple.notification(
            "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "after-4", signedDate: start + 4000,
            transaction: AppleFixtures.transaction("9400000003", original: "9400000001", product: "premium.yearly", expires: yearEnd + 365 * Self.day)
        )
        #expect(try deliver(cancelled).body == "applied\n")
        #expect(try client.send(.memberships(user: Self.user)).memberships?.first { $0.id == again.id }?.status == "canceled")
    }

    @Test func aRenewalBoughtBeforeItsRefundAndDeliveredAfterItGivesNoAccess() throws {
        // The renewal's DID_RENEW is held back (a 5xx, a slow retry); its period is refunded first, and the
        // refund revokes the membership. The renewal, delivered late, was signed before the refund (no
        // revocationDate): it is the refunded period, not one paid after the refund.
        let start = AppleFixtures.nowMilliseconds - 600_000
        let end = start + 30 * Self.day
        let first = try subscribe("9600000001", expires: end, at: start)
        var renewal = AppleFixtures.transaction("9600000002", original: "9600000001", expires: end + 30 * Self.day)
        renewal["purchaseDate"] = start + 500
        let refund = apple.notification("REFUND", uuid: "late-1", signedDate: start + 1000, transaction: refunded(renewal, at: start + 1000))
        #expect(try deliver(refund).body == "applied\n")
        #expect(try current()?.status == "revoked")
        let late = try deliver(apple.notification("DID_RENEW", uuid: "late-2", signedDate: start + 600, transaction: renewal)).body
        #expect(!late.hasPrefix("applied"), "\(late)")
        #expect(try client.send(.memberships(user: Self.user)).memberships?.map(\.id) == [first.id])
        #expect(try client.send(.check(user: Self.user, product: "premium.monthly")).body["active"]?.boolValue == false)
    }

    @Test func aRenewalAfterTheRefundOfItsPeriodGivesTheNewPeriodAndARefundOfThatEndsItAgain() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        let end = start + 30 * Self.day
        try subscribe("9500000001", expires: end, at: start)
        let paid = AppleFixtures.transaction("9500000001", original: "9500000001", expires: end)
        #expect(try deliver(apple.notification("REFUND", uuid: "ren-1", signedDate: start + 1000, transaction: refunded(paid, at: start + 1000))).body == "applied\n")
        // Renewal stayed on (RevenueCat: "in the event of refunds, a subscription's auto-renewal setting may
        // still be active"): the next period is charged.
        let next = AppleFixtures.transaction("9500000002", original: "9500000001", expires: end + 30 * Self.day)
        #expect(try deliver(apple.notification("DID_RENEW", uuid: "ren-2", signedDate: start + 2000, transaction: next)).body == "applied\n")
        var membership = try #require(try current())
        #expect(membership.isActive)
        #expect(expiry(membership) == end + 30 * Self.day)
        // That period refunded too: the membership that began with it is revoked.
        #expect(try deliver(apple.notification("REFUND", uuid: "ren-3", signedDate: start + 3000, transaction: refunded(next, at: start + 3000))).body == "applied\n")
        membership = try #require(try current())
        #expect(membership.transactions.map(\.id) == ["9500000002"])
        #expect(membership.status == "revoked")
        #expect(try client.send(.check(user: Self.user, product: "premium.monthly")).body["active"]?.boolValue == false)
    }

    @Test func aRefundOfAnEarlierPeriodLeavesTheCurrentPeriodPaid() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        let end = start + 30 * Self.day
        try subscribe("9600000001", expires: end, at: start)
        let renewal = AppleFixtures.transaction("9600000002", original: "9600000001", expires: end + 30 * Self.day)
        #expect(try deliver(apple.notification("DID_RENEW", uuid: "old-1", signedDate: start + 1000, transaction: renewal)).body == "applied\n")
        // The first period is refunded after the subscription renewed past it.
        let firstPeriod = AppleFixtures.transaction("9600000001", original: "9600000001", expires: end)
        let reply = try deliver(apple.notification("REFUND", uuid: "old-2", signedDate: start + 2000, transaction: refunded(firstPeriod, at: start + 2000)))
        #expect(reply.body.hasPrefix("ignored: a refund of an earlier period"), "\(reply.body)")
        var membership = try #require(try current())
        #expect(membership.isActive)
        #expect(membership.revokedAt == nil)
        // The current period's refund ends it.
        #expect(try deliver(apple.notification("REFUND", uuid: "old-3", signedDate: start + 3000, transaction: refunded(renewal, at: start + 3000))).body == "applied\n")
        membership = try #require(try current())
        #expect(membership.status == "revoked")
        #expect(membership.transactions.last?.revokedAt != nil)
    }

    @Test func aReversedRefundReachesTheRefundedMembershipAfterAResubscription() throws {
        let start = AppleFixtures.nowMilliseconds - 600_000
        let first = try subscribe("9700000001", expires: start + 30 * Self.day, at: start)
        let paid = AppleFixtures.transaction("9700000001", original: "9700000001", expires: start + 30 * Self.day)
        #expect(try deliver(apple.notification("REFUND", uuid: "rr-a", signedDate: start + 1000, transaction: refunded(paid, at: start + 1000))).body == "applied\n")
        let again = AppleFixtures.transaction("9700000002", original: "9700000001", expires: start + 60 * Self.day)
        #expect(try deliver(apple.notification("SUBSCRIBED", subtype: "RESUBSCRIBE", uuid: "rr-b", signedDate: start + 2000, transaction: again)).body == "applied\n")
        // REFUND_REVERSED of the first period's transaction: the membership that refund revoked gets it back.
        #expect(try deliver(apple.notification("REFUND_REVERSED", uuid: "rr-c", signedDate: start + 3000, transaction: paid)).body == "applied\n")
        let memberships = try #require(try client.send(.memberships(user: Self.user)).memberships)
        #expect(memberships.count == 2)
        #expect(memberships.allSatisfy { $0.isActive })
        #expect(memberships.first { $0.id == first.id }?.revokedAt == nil)
    }
}
