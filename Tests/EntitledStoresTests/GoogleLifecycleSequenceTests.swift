import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Sequences of a Google Play subscription's life across purchase tokens: a downgrade or crossgrade (a new
/// token whose `linkedPurchaseToken` names the old one,
/// https://developer.android.com/google/play/billing/subscriptions#upgrade-downgrade), and a resubscription
/// after the subscription lapsed (a new token that names none).
extension GoogleNotificationTests {
    @Test func aDowngradeAndACrossgradeMoveTheMembershipToTheNewPurchaseAndTheReplacedOneNoLongerEndsIt() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        let end = start + 30 * Self.day
        // A yearly plan downgraded to the monthly one; a monthly plan crossgraded to another of the same length.
        for (user, from, to) in [("user_down", "premium_yearly", "premium_monthly"), ("user_cross", "premium_monthly", "pro_monthly")] {
            let old = "token-\(user)-1", new = "token-\(user)-2"
            let first = Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.8100-\(user)-1", expiry: end + 335 * Self.day, user: user, product: from)
            try answer([old: first])
            #expect(try notify("\(user)-4a", type: 4, token: old, at: start).body == "applied\n")
            // Replaced at once (WITH_TIME_PRORATION, or WITHOUT_PRORATION for the crossgrade): the new token
            // starts with its own order and expiry; the old one reads EXPIRED.
            var replaced = first
            replaced["subscriptionState"] = "SUBSCRIPTION_STATE_EXPIRED"
            let replacement = Self.resource(
                "SUBSCRIPTION_STATE_ACTIVE", order: "GPA.8100-\(user)-2", expiry: end, user: user, product: to, more: ["linkedPurchaseToken": old]
            )
            try answer([old: replaced, new: replacement])
            #expect(try notify("\(user)-4b", type: 4, token: new, at: start + 1000).body == "applied\n")
            var current = try #require(try subscription(of: user))
            #expect(current.productId == to, "\(user)")
            #expect(current.expiresAt == ProtocolTime.string(milliseconds: end), "\(user)")
            #expect(current.transactions.map(\.id) == ["GPA.8100-\(user)-1", "GPA.8100-\(user)-2"], "\(user)")
            let stale = try notify("\(user)-13", type: 13, token: old, at: start + 2000)
            #expect(stale.body.hasPrefix("ignored: purchase token \(old) was replaced"), "\(user): \(stale.body)")
            current = try #require(try subscription(of: user))
            #expect(current.isActive, "\(user)")
            #expect(try client.send(.memberships(user: user)).memberships?.count == 1, "\(user)")
        }
    }

    @Test func aResubscriptionAfterTheSubscriptionLapsedGivesAccessAgainWithItsNewToken() throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let lapsed = now - 10 * Self.day
        let first = Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.8200-0000-0000-00001", expiry: lapsed, user: "user_rs")
        try answer(["token-rs1": first])
        #expect(try notify("rs-4a", type: 4, token: "token-rs1", at: lapsed - 30 * Self.day).body == "applied\n")
        var expired = first
        expired["subscriptionState"] = "SUBSCRIPTION_STATE_EXPIRED"
        try answer(["token-rs1": expired])
        #expect(try notify("rs-13", type: 13, token: "token-rs1", at: lapsed + 1000).body == "applied\n")
        #expect(try client.send(.check(user: "user_rs", product: "premium_monthly")).body["active"]?.boolValue == false)
        // Bought again after it lapsed: a new purchase token, linked to nothing (Google links only a re-signup
        // before the old one expired).
        let again = Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.8200-0000-0000-00002", expiry: now + 30 * Self.day, user: "user_rs")
        try answer(["token-rs1": expired, "token-rs2": again])
        #expect(try notify("rs-4b", type: 4, token: "token-rs2", at: now - 1000).body == "applied\n")
        #expect(try client.send(.check(user: "user_rs", product: "premium_monthly")).body["active"]?.boolValue == true)
        // The old token's notification delivered late ends nothing of the new purchase.
        #expect(try notify("rs-13", type: 13, token: "token-rs1", at: lapsed + 1000).status == 200)
        #expect(try client.send(.check(user: "user_rs", product: "premium_monthly")).body["active"]?.boolValue == true)
        let renewing = try #require(try client.send(.memberships(originalTransactionId: "token-rs2")).memberships?.first)
        #expect(renewing.isActive)
        #expect(renewing.willRenew)
    }
}
