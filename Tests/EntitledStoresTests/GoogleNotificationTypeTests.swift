import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// The `notificationType`s of a subscription's real-time developer notification
/// (https://developer.android.com/google/play/billing/rtdn-reference#sub) that the lifecycle test does not send,
/// each sent for real, with the Play API stand-in answering the `subscriptionsv2` resource Google documents
/// for it (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2).
extension GoogleNotificationTests {
    /// `user`'s subscription resource in `state`, expiring at `expiry` (milliseconds), with `plan` merged into
    /// its line item's `autoRenewingPlan` and `more` into the resource.
    static func resource(
        _ state: String, order: String, expiry: Int64, user: String, autoRenew: Bool = true, product: String = "premium_monthly",
        plan: [String: Any] = [:], more: [String: Any] = [:]
    ) -> [String: Any] {
        var purchase = subscription(state, order: order, expiry: ProtocolTime.string(milliseconds: expiry), autoRenew: autoRenew, product: product)
        purchase["externalAccountIdentifiers"] = ["obfuscatedExternalAccountId": user]
        var renewing: [String: Any] = ["autoRenewEnabled": autoRenew]
        renewing.merge(plan) { $1 }
        purchase["lineItems"] = [["productId": product, "expiryTime": ProtocolTime.string(milliseconds: expiry), "autoRenewingPlan": renewing]]
        purchase.merge(more) { $1 }
        return purchase
    }

    /// Puts `purchases` (token: resource) in the stand-in, replacing the ones it had.
    func answer(_ purchases: [String: [String: Any]]) throws {
        try google.set(["subscriptions": purchases])
    }

    func actions(of user: String) throws -> [String] {
        try client.send(.history(user: user)).history?.map(\.action) ?? []
    }

    static let day: Int64 = 86_400_000

    @Test func aDeferredChargeMovesTheExpiryWithoutCountingARenewal() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        let end = start + 30 * Self.day
        try answer(["token-d": Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.7100-0000-0000-00001", expiry: end, user: "user_d")])
        #expect(try notify("d-4", type: 4, token: "token-d", at: start).body == "applied\n")
        // SUBSCRIPTION_DEFERRED (9): the developer deferred the next charge (purchases.subscriptionsv2.defer):
        // the same order, a later expiry.
        try answer(["token-d": Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.7100-0000-0000-00001", expiry: end + 7 * Self.day, user: "user_d")])
        #expect(try notify("d-9", type: 9, token: "token-d", at: start + 1000).body == "applied\n")
        var current = try #require(try subscription(of: "user_d"))
        #expect(current.expiresAt == ProtocolTime.string(milliseconds: end + 7 * Self.day))
        #expect(current.renewsCount == 0)
        #expect(current.transactions.map(\.id) == ["GPA.7100-0000-0000-00001"])
        #expect(try actions(of: "user_d") == ["extension", "grant"])
        // The next charge is a renewal, and counts one.
        try answer(["token-d": Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.7100-0000-0000-00001..0", expiry: end + 37 * Self.day, user: "user_d")])
        #expect(try notify("d-2", type: 2, token: "token-d", at: start + 2000).body == "applied\n")
        current = try #require(try subscription(of: "user_d"))
        #expect(current.renewsCount == 1)
    }

    @Test func inGraceThenRecoveredKeepsAccessAndOnHoldThenRecoveredEndsItUntilPaid() throws {
        // The first period ended an hour ago, and its renewal failed.
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let end = now - 3_600_000
        let start = end - 30 * Self.day
        for (user, path) in [("user_gr", [6]), ("user_oh", [5]), ("user_go", [6, 5])] {
            let token = "token-\(user)"
            let order = "GPA.7200-0000-0000-\(user)"
            try answer([token: Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: order, expiry: end, user: user)])
            #expect(try notify("\(user)-4", type: 4, token: token, at: start).body == "applied\n")
            var time = end
            for type in path {
                time += 1000
                if type == 6 {
                    // SUBSCRIPTION_IN_GRACE_PERIOD: the renewal failed; Google extends the line item's expiry to the
                    // grace period's end, with the same order.
                    try answer([token: Self.resource("SUBSCRIPTION_STATE_IN_GRACE_PERIOD", order: order, expiry: now + 6 * Self.day, user: user)])
                    #expect(try notify("\(user)-6", type: 6, token: token, at: time).body == "applied\n")
                    let current = try #require(try subscription(of: user))
                    #expect(current.isActive, "\(user): access stays during the grace period")
                    #expect(current.gracePeriodExpiresAt == ProtocolTime.string(milliseconds: now + 6 * Self.day))
                } else {
                    // SUBSCRIPTION_ON_HOLD: account hold; the expiry is the last paid period's end, passed.
                    try answer([token: Self.resource("SUBSCRIPTION_STATE_ON_HOLD", order: order, expiry: end, user: user)])
                    #expect(try notify("\(user)-5", type: 5, token: token, at: time).body == "applied\n")
                    let current = try #require(try subscription(of: user))
                    #expect(!current.isActive, "\(user): no access on hold")
                    #expect(current.billingIssueDetectedAt != nil)
                    #expect(current.gracePeriodExpiresAt == nil)
                }
            }
            // SUBSCRIPTION_RECOVERED: paid after all, a new order and period.
            try answer([token: Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: order + "..0", expiry: now + 30 * Self.day, user: user)])
            #expect(try notify("\(user)-1", type: 1, token: token, at: time + 1000).body == "applied\n")
            let recovered = try #require(try subscription(of: user))
            #expect(recovered.isActive, "\(user)")
            #expect(recovered.billingIssueDetectedAt == nil, "\(user)")
            #expect(recovered.renewsCount == 1, "\(user)")
        }
    }

    @Test func aPriceChangeOrAConsentAskedChangesNothingAndAPriceIncreaseRefusedCancelsAtThePeriodsEnd() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        let end = start + 30 * Self.day
        let order = "GPA.7300-0000-0000-00001"
        let newPrice: [String: Any] = ["currencyCode": "USD", "units": "12", "nanos": 990_000_000]
        try answer(["token-pc": Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: order, expiry: end, user: "user_pc")])
        #expect(try notify("pc-4", type: 4, token: "token-pc", at: start).body == "applied\n")
        let before = try #require(try subscription(of: "user_pc"))
        // SUBSCRIPTION_PRICE_CHANGE_UPDATED (19), SUBSCRIPTION_PRICE_CHANGE_CONFIRMED (8, deprecated): the line
        // item's priceChangeDetails; SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED (22): its priceStepUpConsentDetails.
        let announced: [String: Any] = [
            "priceChangeDetails": [
                "newPrice": newPrice, "priceChangeMode": "PRICE_INCREASE", "priceChangeState": "OUTSTANDING",
                "expectedNewPriceChargeTime": ProtocolTime.string(milliseconds: end),
            ]
        ]
        var confirmed = announced
        confirmed["priceChangeDetails"] = (announced["priceChangeDetails"] as? [String: Any] ?? [:]).merging(["priceChangeState": "CONFIRMED"]) { $1 }
        let consent: [String: Any] = ["priceStepUpConsentDetails": ["newPrice": newPrice, "consentDeadlineTime": ProtocolTime.string(milliseconds: end)]]
        for (type, plan) in [(19, announced), (22, consent), (8, confirmed)] {
            try answer(["token-pc": Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: order, expiry: end, user: "user_pc", plan: plan)])
            let reply = try notify("pc-\(type)", type: type, token: "token-pc", at: start + Int64(type) * 1000)
            // No event: what it points to, the state, the membership has already.
            #expect(reply.body == "duplicate\n", "\(type): \(reply.body)")
            #expect(try subscription(of: "user_pc") == before, "\(type)")
        }
        // No consent by the deadline: Google cancels it (SUBSCRIPTION_CANCELED); access stays until the end.
        try answer(["token-pc": Self.resource("SUBSCRIPTION_STATE_CANCELED", order: order, expiry: end, user: "user_pc", autoRenew: false)])
        #expect(try notify("pc-3", type: 3, token: "token-pc", at: start + 30_000).body == "applied\n")
        let canceled = try #require(try subscription(of: "user_pc"))
        #expect(canceled.isActive)
        #expect(!canceled.willRenew)
        #expect(canceled.expiresAt == before.expiresAt)
    }

    @Test func aPauseScheduledChangesNothingThePauseEndsAccessAndRecoveredResumesIt() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        let end = start + 30 * Self.day
        let order = "GPA.7400-0000-0000-00001"
        try answer(["token-ps": Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: order, expiry: end, user: "user_ps")])
        #expect(try notify("ps-4", type: 4, token: "token-ps", at: start).body == "applied\n")
        // SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED (11): a pause asked for, from the period's end: still ACTIVE.
        #expect(try notify("ps-11", type: 11, token: "token-ps", at: start + 1000).body == "duplicate\n")
        #expect(try subscription(of: "user_ps")?.isActive == true)
        // SUBSCRIPTION_PAUSED (10): PAUSED, with pausedStateContext.autoResumeTime.
        let paused = Self.resource("SUBSCRIPTION_STATE_PAUSED", order: order, expiry: end, user: "user_ps", more: ["pausedStateContext": ["autoResumeTime": ProtocolTime.string(milliseconds: end + 30 * Self.day)]])
        try answer(["token-ps": paused])
        #expect(try notify("ps-10", type: 10, token: "token-ps", at: start + 2000).body == "applied\n")
        #expect(try subscription(of: "user_ps")?.isActive == false)
        // SUBSCRIPTION_RECOVERED (1): "resumed from pause", a new order and period.
        try answer(["token-ps": Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: order + "..0", expiry: end + 60 * Self.day, user: "user_ps")])
        #expect(try notify("ps-1", type: 1, token: "token-ps", at: start + 3000).body == "applied\n")
        let resumed = try #require(try subscription(of: "user_ps"))
        #expect(resumed.isActive)
        #expect(resumed.pausedAt == nil)
        #expect(try actions(of: "user_ps") == ["resume", "pause", "grant"])
    }

    @Test func anItemsChangeOrAnInstallmentsScheduledCancellationIsReadThroughTheState() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        let end = start + 30 * Self.day
        let order = "GPA.7500-0000-0000-00001"
        try answer(["token-it": Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: order, expiry: end, user: "user_it")])
        #expect(try notify("it-4", type: 4, token: "token-it", at: start).body == "applied\n")
        let before = try #require(try subscription(of: "user_it"))
        // SUBSCRIPTION_ITEMS_CHANGED (17): an add-on item joined the base plan's; the membership follows the
        // first line item, unchanged.
        var bundle = Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: order, expiry: end, user: "user_it")
        bundle["lineItems"] = (bundle["lineItems"] as? [[String: Any]] ?? []) + [["productId": "addon_storage", "expiryTime": ProtocolTime.string(milliseconds: end), "autoRenewingPlan": ["autoRenewEnabled": true]]]
        try answer(["token-it": bundle])
        #expect(try notify("it-17", type: 17, token: "token-it", at: start + 1000).body == "duplicate\n")
        #expect(try subscription(of: "user_it") == before)
        // SUBSCRIPTION_CANCELLATION_SCHEDULED (18): an installment plan's cancellation, pending until its
        // committed payments are made; it still renews until then.
        let installments: [String: Any] = [
            "installmentDetails": ["initialCommittedPaymentsCount": 12, "remainingCommittedPaymentsCount": 11, "pendingCancellation": [String: Any]()]
        ]
        try answer(["token-it": Self.resource("SUBSCRIPTION_STATE_ACTIVE", order: order, expiry: end, user: "user_it", plan: installments)])
        #expect(try notify("it-18", type: 18, token: "token-it", at: start + 2000).body == "duplicate\n")
        #expect(try subscription(of: "user_it")?.willRenew == true)
    }
}
