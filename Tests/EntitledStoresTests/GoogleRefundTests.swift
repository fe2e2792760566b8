import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// One-time products' notifications and refunds as Google means them
/// (https://developer.android.com/google/play/billing/rtdn-reference): `oneTimeProductNotification`,
/// `voidedPurchaseNotification` (`refundType` 1 a full refund, 2 a quantity-based partial one) and
/// `pendingRefundReviewNotification`.
extension GoogleNotificationTests {
    /// A one-time purchase of `user` (`purchases.products`), acknowledged, in `purchaseState` `state`.
    static func oneTimePurchase(order: String, user: String, state: Int = 0, quantity: Int? = nil, refundable: Int? = nil) -> [String: Any] {
        var purchase: [String: Any] = [
            "kind": "androidpublisher#productPurchase", "purchaseState": state, "consumptionState": 0, "orderId": order,
            "purchaseTimeMillis": "1764806400000", "acknowledgementState": 1, "obfuscatedExternalAccountId": user,
        ]
        purchase["quantity"] = quantity
        purchase["refundableQuantity"] = refundable
        return purchase
    }

    func voided(_ id: String, token: String, order: String, productType: Int, refundType: Int, at time: Int64) throws -> HTTPReply {
        let notification = ["voidedPurchaseNotification": ["purchaseToken": token, "orderId": order, "productType": productType, "refundType": refundType]]
        return try push(id, notification, eventTime: time, token: try pushToken())
    }

    func active(_ user: String, _ product: String) throws -> Bool? {
        try client.send(.check(user: user, product: product)).body["active"]?.boolValue
    }

    @Test func aPendingOneTimePurchaseGrantsNothingUntilPaidAndItsCancellationNothingAtAll() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        // ONE_TIME_PRODUCT_PURCHASED (1) of a purchase whose payment is pending (purchaseState 2).
        try google.set(["products": ["token-pp": Self.oneTimePurchase(order: "GPA.9100-0000-0000-00001", user: "user_pp", state: 2)]])
        let purchased = ["oneTimeProductNotification": ["version": "1.0", "notificationType": 1, "purchaseToken": "token-pp", "sku": "lifetime_unlock"]]
        #expect(try push("pp-1", purchased, eventTime: start, token: try pushToken()).body.hasPrefix("ignored"))
        // ONE_TIME_PRODUCT_CANCELED (2): the pending purchase was canceled (purchaseState 1), never paid.
        try google.set(["products": ["token-pp": Self.oneTimePurchase(order: "GPA.9100-0000-0000-00001", user: "user_pp", state: 1)]])
        let canceled = ["oneTimeProductNotification": ["version": "1.0", "notificationType": 2, "purchaseToken": "token-pp", "sku": "lifetime_unlock"]]
        #expect(try push("pp-2", canceled, eventTime: start + 1000, token: try pushToken()).body.hasPrefix("ignored"))
        #expect(try client.send(.memberships(user: "user_pp")).memberships == [])
    }

    @Test func aQuantityBasedPartialRefundKeepsAccessWhileUnitsArePaidAndTheLastUnitsRefundEndsIt() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        let order = "GPA.9200-0000-0000-00001"
        try google.set(["products": ["token-q": Self.oneTimePurchase(order: order, user: "user_q", quantity: 3, refundable: 3)]])
        let purchased = ["oneTimeProductNotification": ["version": "1.0", "notificationType": 1, "purchaseToken": "token-q", "sku": "coin_pack"]]
        #expect(try push("q-1", purchased, eventTime: start, token: try pushToken()).body == "applied\n")
        // One unit of three refunded: two are still paid for.
        try google.set(["products": ["token-q": Self.oneTimePurchase(order: order, user: "user_q", quantity: 3, refundable: 2)]])
        let partial = try voided("q-2", token: "token-q", order: order, productType: 2, refundType: 2, at: start + 1000)
        #expect(partial.body.hasPrefix("ignored: a quantity-based partial refund: 2 of the purchase's units are still paid for"), "\(partial.body)")
        #expect(try active("user_q", "coin_pack") == true)
        // Google unreachable while the receiver asks what is left: 503, and Pub/Sub's retry decides.
        try google.set(["fail": true])
        #expect(try voided("q-3", token: "token-q", order: order, productType: 2, refundType: 2, at: start + 2000).status == 503)
        try google.set(["fail": false])
        // The last two refunded: nothing is paid for any more.
        try google.set(["products": ["token-q": Self.oneTimePurchase(order: order, user: "user_q", quantity: 3, refundable: 0)]])
        #expect(try voided("q-3", token: "token-q", order: order, productType: 2, refundType: 2, at: start + 2000).body == "applied\n")
        #expect(try active("user_q", "coin_pack") == false)
    }

    @Test func aRefundReviewChangesNothingAnEarlierPeriodsRefundKeepsTheCurrentOneAndTheLatestsEndsIt() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        let first = "GPA.9300-0000-0000-00001", second = first + "..0"
        try answer(["token-v": Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: first, expiry: start + 30 * Self.day, user: "user_v")])
        #expect(try notify("v-4", type: 4, token: "token-v", at: start).body == "applied\n")
        try answer(["token-v": Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: second, expiry: start + 60 * Self.day, user: "user_v")])
        #expect(try notify("v-2", type: 2, token: "token-v", at: start + 1000).body == "applied\n")
        // A chargeback Google asks the developer about (orders.reviewrefund): no refund yet.
        let review = ["pendingRefundReviewNotification": ["orderId": second, "pendingRefundToken": "prt-1"]]
        #expect(try push("v-r", review, eventTime: start + 2000, token: try pushToken()).body.hasPrefix("ignored: a pending refund review"))
        #expect(try active("user_v", "premium_monthly") == true)
        // The first period's order refunded: that period is over, the current one is paid for.
        let earlier = try voided("v-v1", token: "token-v", order: first, productType: 1, refundType: 1, at: start + 3000)
        #expect(earlier.body.hasPrefix("ignored: the refund of an earlier period's order"), "\(earlier.body)")
        #expect(try active("user_v", "premium_monthly") == true)
        // The current period's order refunded: access ends.
        #expect(try voided("v-v2", token: "token-v", order: second, productType: 1, refundType: 1, at: start + 4000).body == "applied\n")
        #expect(try active("user_v", "premium_monthly") == false)
        #expect(try subscription(of: "user_v")?.revokedAt != nil)
    }
}
