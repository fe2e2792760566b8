import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// A refund in Stripe returns one charge and leaves the subscription billing unless the merchant cancels it
/// too (https://docs.stripe.com/refunds). A later paid period is the customer paying: access comes back, as a
/// new membership of the same user (`entitled` keeps a revocation final), whose original transaction is the
/// subscription id with a generation (`sub_...~2`). A refund of a period that is over takes nothing away, as
/// RevenueCat leaves it (https://www.revenuecat.com/docs/subscription-guidance/refunds).
@Suite struct StripeRefundThenPaymentTests {
    let processes: StripeReceiverProcesses
    var client: EntitledConnection { processes.client }
    let start = StripeFixtures.now - 3600
    let month: Int64 = 30 * 86_400

    init() throws {
        processes = try StripeReceiverProcesses()
    }

    func deliver(_ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try processes.deliver(body, sourceLocation: sourceLocation)
    }

    func period(_ id: String, at created: Int64, end: Int64, invoice: String, cancel: Bool = false) -> [UInt8] {
        StripeFixtures.subscriptionEvent(id, created: created, subscription: "sub_x", periodEnd: end, user: "user_x", cancelAtPeriodEnd: cancel, latestInvoice: invoice)
    }

    func membership(original: String) throws -> MembershipInfo? {
        try client.send(.memberships(originalTransactionId: original)).memberships?.first
    }

    func isActive() throws -> Bool? {
        try client.send(.check(user: "user_x", product: "prod_pro")).body["active"]?.boolValue
    }

    @Test func aPeriodPaidAfterARefundGivesAccessBackAndARefundOfAPastPeriodTakesNothing() throws {
        let firstEnd = start + month
        let created = StripeFixtures.subscriptionEvent("evt_x1", type: "customer.subscription.created", created: start, subscription: "sub_x", periodEnd: firstEnd, user: "user_x", latestInvoice: "in_x1")
        #expect(try deliver(created) == "applied\n")
        let refund = StripeFixtures.refundEvent("evt_x2", created: start + 10, invoice: "in_x1")
        #expect(try deliver(refund) == "applied\n")
        #expect(try deliver(refund) == "duplicate\n")
        #expect(try isActive() == false)

        // The refunded period's own events change nothing: the membership is revoked.
        let sameperiod = try deliver(period("evt_x3", at: start + 20, end: firstEnd, invoice: "in_x1", cancel: true))
        #expect(sameperiod.hasPrefix("ignored: the membership of this purchase is revoked"), "\(sameperiod)")
        #expect(try membership(original: "sub_x~2") == nil)

        // The subscription bills the next period and the customer pays: access again, until its end.
        let secondEnd = firstEnd + month
        #expect(try deliver(period("evt_x4", at: start + 30, end: secondEnd, invoice: "in_x2")) == "applied\n")
        #expect(try isActive() == true)
        let successor = try #require(try membership(original: "sub_x~2"))
        #expect(successor.user == "user_x" && successor.productId == "prod_pro" && successor.willRenew)
        #expect(successor.transactions.map(\.id) == ["in_x2"])
        #expect(successor.expiresAt.flatMap(ProtocolTimeForTests.seconds) == secondEnd)
        #expect(try membership(original: "sub_x")?.status == "revoked")

        // It renews like any membership, and a refund of the period that is over changes nothing.
        let thirdEnd = secondEnd + month
        #expect(try deliver(period("evt_x5", at: start + 40, end: thirdEnd, invoice: "in_x3")) == "applied\n")
        #expect(try membership(original: "sub_x~2")?.renewsCount == 1)
        let pastRefund = try deliver(StripeFixtures.refundEvent("evt_x6", created: start + 50, invoice: "in_x2"))
        #expect(pastRefund.hasPrefix("ignored: invoice in_x2 paid a period that is over"), "\(pastRefund)")
        #expect(try isActive() == true)

        // A refund of the current period revokes it; the next paid period starts a third membership.
        #expect(try deliver(StripeFixtures.refundEvent("evt_x7", created: start + 60, invoice: "in_x3")) == "applied\n")
        #expect(try isActive() == false)
        #expect(try deliver(period("evt_x8", at: start + 70, end: thirdEnd + month, invoice: "in_x4")) == "applied\n")
        #expect(try isActive() == true)
        #expect(try membership(original: "sub_x~3")?.transactions.map(\.id) == ["in_x4"])
        #expect(try client.send(.memberships(user: "user_x")).memberships?.count == 3)
    }

    /// Where a refund stands for a subscription that is not billing (canceled, or past due and not paid), no
    /// access comes back.
    @Test func aRefundedSubscriptionThatDoesNotPayAgainStaysWithoutAccess() throws {
        let end = start + month
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_y1", type: "customer.subscription.created", created: start, subscription: "sub_x", periodEnd: end, user: "user_x", latestInvoice: "in_y1")) == "applied\n")
        #expect(try deliver(StripeFixtures.refundEvent("evt_y2", created: start + 10, invoice: "in_y1")) == "applied\n")
        let pastDue = StripeFixtures.subscriptionEvent("evt_y3", created: start + 20, subscription: "sub_x", status: "past_due", periodEnd: end + month, user: "user_x", latestInvoice: "in_y2")
        #expect(try deliver(pastDue).hasPrefix("ignored: the membership of this purchase is revoked"))
        let deleted = StripeFixtures.subscriptionEvent("evt_y4", type: "customer.subscription.deleted", created: start + 30, subscription: "sub_x", status: "canceled", periodEnd: end + month, user: "user_x", latestInvoice: "in_y2")
        #expect(try deliver(deleted).hasPrefix("ignored: the membership of this purchase is revoked"))
        #expect(try isActive() == false)
        #expect(try client.send(.memberships(user: "user_x")).memberships?.count == 1)
    }

    @Test func anOperatorsRevokeWithTheReasonRefundStaysFinalWhenTheSubscriptionBillsAgain() throws {
        // Only a store's refund starts a chain: an operator who revokes by hand, whatever the reason given,
        // means it (PROTOCOL.md, Revocation: a revoke is final).
        let created = StripeFixtures.subscriptionEvent("evt_o1", type: "customer.subscription.created", created: start, subscription: "sub_x", periodEnd: start + month, user: "user_x", latestInvoice: "in_o1")
        #expect(try deliver(created) == "applied\n")
        let held = try #require(try membership(original: "sub_x"))
        #expect(try client.send(.revoke(membership: held.id, reason: "refund")).isOK)
        let billed = try deliver(period("evt_o2", at: start + 30, end: start + 2 * month, invoice: "in_o2"))
        #expect(billed.hasPrefix("ignored"), "\(billed)")
        #expect(try membership(original: "sub_x~2") == nil)
        #expect(try isActive() == false)
    }
}
