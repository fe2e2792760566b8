import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// The lifecycle sequences of a Stripe subscription, each delivered as the events Stripe sends for it
/// (https://docs.stripe.com/billing/subscriptions/overview, .../webhooks), through real `entitled` and
/// `entitled-stores` processes: a pause and its resumption, a cancellation undone, plan changes, a new
/// subscription after one ended, and an event delivered again.
@Suite struct StripeLifecycleTests {
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

    func membership(original: String) throws -> MembershipInfo {
        try #require(try client.send(.memberships(originalTransactionId: original)).memberships?.first)
    }

    func actions(_ user: String) throws -> [String]? {
        try client.send(.history(user: user)).history?.map(\.action)
    }

    func isActive(_ user: String, _ product: String) throws -> Bool? {
        try client.send(.check(user: user, product: product)).body["active"]?.boolValue
    }

    /// `customer.subscription.paused` (a trial ended without a payment method,
    /// https://docs.stripe.com/billing/subscriptions/trials#create-free-trials-without-payment) stops access;
    /// `customer.subscription.resumed` (https://docs.stripe.com/api/subscriptions/resume) restores it, and the
    /// period paid at the resumption is a renewal whose invoice the membership holds.
    @Test func aPauseStopsAccessAndTheResumptionRestoresItWithItsPaidPeriod() throws {
        let trialEnd = start + 7 * 86_400
        let created = StripeFixtures.subscriptionEvent(
            "evt_p1", type: "customer.subscription.created", created: start, subscription: "sub_p", status: "trialing", periodEnd: trialEnd, user: "user_p"
        )
        #expect(try deliver(created) == "applied\n")
        let paused = StripeFixtures.subscriptionEvent(
            "evt_p2", type: "customer.subscription.paused", created: start + 10, subscription: "sub_p", status: "paused", periodEnd: trialEnd, user: "user_p"
        )
        #expect(try deliver(paused) == "applied\n")
        #expect(try membership(original: "sub_p").status == "paused")
        #expect(try isActive("user_p", "prod_pro") == false)

        let resumedEnd = start + 20 + month
        let resumed = StripeFixtures.subscriptionEvent(
            "evt_p3", type: "customer.subscription.resumed", created: start + 20, subscription: "sub_p", periodEnd: resumedEnd, user: "user_p",
            latestInvoice: "in_p2"
        )
        #expect(try deliver(resumed) == "applied\n")
        let after = try membership(original: "sub_p")
        #expect(after.status == "active")
        #expect(after.pausedAt == nil)
        #expect(after.expiresAt.flatMap(ProtocolTimeForTests.seconds) == resumedEnd)
        #expect(after.transactions.map(\.id) == ["in_1", "in_p2"])
        #expect(after.renewsCount == 1)
        #expect(try isActive("user_p", "prod_pro") == true)
        #expect(try actions("user_p") == ["renewal", "resume", "pause", "grant"])
    }

    /// Canceling at the period's end and taking it back (`cancel_at_period_end` true, then false; or a
    /// `cancel_at` date set, then cleared: https://docs.stripe.com/billing/subscriptions/cancel) turn renewal
    /// off and on; access lasts meanwhile.
    @Test func aCancellationAtThePeriodsEndIsUndoneWhenTheCustomerKeepsTheSubscription() throws {
        let end = start + month
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_c1", type: "customer.subscription.created", created: start, subscription: "sub_c", periodEnd: end, user: "user_c")) == "applied\n")
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_c2", created: start + 10, subscription: "sub_c", periodEnd: end, user: "user_c", cancelAtPeriodEnd: true)) == "applied\n")
        var current = try membership(original: "sub_c")
        #expect(!current.willRenew && current.unsubscribeDetectedAt != nil && current.isActive)
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_c3", created: start + 20, subscription: "sub_c", periodEnd: end, user: "user_c")) == "applied\n")
        current = try membership(original: "sub_c")
        #expect(current.willRenew && current.unsubscribeDetectedAt == nil && current.renewState == "will_renew")

        // The same with a cancellation date instead of the flag.
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_c4", created: start + 30, subscription: "sub_c", periodEnd: end, user: "user_c", cancelAt: end)) == "applied\n")
        #expect(try membership(original: "sub_c").willRenew == false)
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_c5", created: start + 40, subscription: "sub_c", periodEnd: end, user: "user_c")) == "applied\n")
        #expect(try membership(original: "sub_c").willRenew == true)
        #expect(try actions("user_c") == ["uncancellation", "cancellation", "uncancellation", "cancellation", "grant"])
    }

    /// A plan change changes the subscription item's price (https://docs.stripe.com/billing/subscriptions/change-price):
    /// at once, prorated, within the period (an upgrade or crossgrade; its proration invoiced at once is the
    /// change's transaction); with a new period when the billing interval changes (the anchor resets, the
    /// new period is paid: a renewal); a downgrade scheduled for the period's end
    /// (https://docs.stripe.com/billing/subscriptions/subscription-schedules) shows only when it takes effect,
    /// with the new period.
    @Test func anUpgradeACrossgradeAndADowngradeMoveTheMembershipToTheNewProduct() throws {
        let end = start + month
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_g1", type: "customer.subscription.created", created: start, subscription: "sub_g", periodEnd: end, user: "user_g")) == "applied\n")

        // Upgrade, prorated and invoiced at once: same period, the new product, the proration's invoice.
        let upgrade = StripeFixtures.subscriptionEvent("evt_g2", created: start + 10, subscription: "sub_g", periodEnd: end, product: "prod_max", user: "user_g", latestInvoice: "in_up")
        #expect(try deliver(upgrade) == "applied\n")
        var current = try membership(original: "sub_g")
        #expect(current.productId == "prod_max")
        #expect(current.expiresAt.flatMap(ProtocolTimeForTests.seconds) == end)
        #expect(current.renewsCount == 0)
        #expect(current.transactions.map(\.id) == ["in_1", "in_up"])
        #expect(try client.send(.memberships(transactionId: "in_up")).memberships?.map(\.id) == [current.id])
        #expect(try isActive("user_g", "prod_max") == true)
        #expect(try isActive("user_g", "prod_pro") == false)

        // Crossgrade to the yearly plan: the interval changed, so a new year starts now, paid.
        let yearEnd = start + 20 + 365 * 86_400
        let yearly = StripeFixtures.subscriptionEvent("evt_g3", created: start + 20, subscription: "sub_g", periodEnd: yearEnd, product: "prod_max_yearly", user: "user_g", latestInvoice: "in_year")
        #expect(try deliver(yearly) == "applied\n")
        current = try membership(original: "sub_g")
        #expect(current.productId == "prod_max_yearly")
        #expect(current.expiresAt.flatMap(ProtocolTimeForTests.seconds) == yearEnd)
        #expect(current.renewsCount == 1)
        #expect(current.transactions.map(\.id) == ["in_1", "in_up", "in_year"])

        // Downgrade scheduled for the year's end: nothing changes until the schedule's phase begins...
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_g4", created: start + 30, subscription: "sub_g", periodEnd: yearEnd, product: "prod_max_yearly", user: "user_g", latestInvoice: "in_year")) == "duplicate\n")
        // ...then the subscription shows the cheaper product with its first month (here dated as if the
        // year had passed: the event's time is all `entitled` orders by).
        let downgradedEnd = yearEnd + month
        let downgrade = StripeFixtures.subscriptionEvent("evt_g5", created: start + 40, subscription: "sub_g", periodEnd: downgradedEnd, product: "prod_basic", user: "user_g", latestInvoice: "in_down")
        #expect(try deliver(downgrade) == "applied\n")
        current = try membership(original: "sub_g")
        #expect(current.productId == "prod_basic")
        #expect(current.expiresAt.flatMap(ProtocolTimeForTests.seconds) == downgradedEnd)
        #expect(current.renewsCount == 2)
        #expect(try isActive("user_g", "prod_basic") == true)
        #expect(try isActive("user_g", "prod_max_yearly") == false)
        #expect(try actions("user_g") == ["renewal", "product_change", "renewal", "product_change", "product_change", "grant"])
    }

    @Test func aRefundOfThePeriodsInvoiceEndsAccessAfterAnUpgradesProrationWasInvoiced() throws {
        // The proration invoice of a mid-period upgrade is the membership's last transaction, but it pays the
        // same period as the period's own invoice: a full refund of that invoice still ends the period.
        let end = start + month
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_r1", type: "customer.subscription.created", created: start, subscription: "sub_r", periodEnd: end, user: "user_r", latestInvoice: "in_r1")) == "applied\n")
        let upgrade = StripeFixtures.subscriptionEvent("evt_r2", created: start + 10, subscription: "sub_r", periodEnd: end, product: "prod_max", user: "user_r", latestInvoice: "in_rp")
        #expect(try deliver(upgrade) == "applied\n")
        #expect(try membership(original: "sub_r").transactions.map(\.id) == ["in_r1", "in_rp"])
        let refund = try deliver(StripeFixtures.refundEvent("evt_r3", created: start + 20, invoice: "in_r1"))
        #expect(refund == "applied\n", "\(refund)")
        #expect(try membership(original: "sub_r").status == "revoked")
        #expect(try isActive("user_r", "prod_max") == false)
    }

    /// A canceled subscription cannot be reactivated in Stripe: a customer who comes back subscribes anew
    /// (https://docs.stripe.com/billing/subscriptions/cancel#reactivating-canceled-subscriptions). The new
    /// subscription is a membership of its own; the ended one stays ended.
    @Test func aNewSubscriptionAfterTheEndedOneIsANewMembershipOfTheSameUser() throws {
        let end = start + month
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_r1", type: "customer.subscription.created", created: start, subscription: "sub_old", periodEnd: end, user: "user_r")) == "applied\n")
        let deleted = StripeFixtures.subscriptionEvent("evt_r2", type: "customer.subscription.deleted", created: start + 10, subscription: "sub_old", status: "canceled", periodEnd: end, user: "user_r")
        #expect(try deliver(deleted) == "applied\n")
        #expect(try isActive("user_r", "prod_pro") == false)

        let newEnd = start + 20 + month
        let again = StripeFixtures.subscriptionEvent("evt_r3", type: "customer.subscription.created", created: start + 20, subscription: "sub_new", periodEnd: newEnd, user: "user_r", latestInvoice: "in_new")
        #expect(try deliver(again) == "applied\n")
        #expect(try isActive("user_r", "prod_pro") == true)
        let fresh = try membership(original: "sub_new")
        #expect(fresh.user == "user_r" && fresh.isActive && fresh.transactions.map(\.id) == ["in_new"])
        #expect(fresh.expiresAt.flatMap(ProtocolTimeForTests.seconds) == newEnd)
        let ended = try membership(original: "sub_old")
        #expect(ended.id != fresh.id && ended.status == "expired")
        #expect(try client.send(.memberships(user: "user_r")).memberships?.count == 2)
    }

    /// Stripe delivers an event again when its answer was lost (https://docs.stripe.com/webhooks#handle-duplicate-events):
    /// at once it is a `duplicate`; once a newer event was applied, it is `ignored` as older; either way it
    /// changes nothing.
    @Test func anEventDeliveredAgainChangesNothing() throws {
        let end = start + month
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_d1", type: "customer.subscription.created", created: start, subscription: "sub_d", periodEnd: end, user: "user_d")) == "applied\n")
        let renewal = StripeFixtures.subscriptionEvent("evt_d2", created: start + 10, subscription: "sub_d", periodEnd: end + month, user: "user_d", latestInvoice: "in_d2")
        #expect(try deliver(renewal) == "applied\n")
        #expect(try deliver(renewal) == "duplicate\n")
        let canceled = StripeFixtures.subscriptionEvent("evt_d3", created: start + 20, subscription: "sub_d", periodEnd: end + month, user: "user_d", cancelAtPeriodEnd: true, latestInvoice: "in_d2")
        #expect(try deliver(canceled) == "applied\n")
        let late = try deliver(renewal)
        #expect(late.hasPrefix("ignored: older than"), "\(late)")
        let current = try membership(original: "sub_d")
        #expect(current.renewsCount == 1 && !current.willRenew)
        #expect(try actions("user_d") == ["cancellation", "renewal", "grant"])
    }
}
