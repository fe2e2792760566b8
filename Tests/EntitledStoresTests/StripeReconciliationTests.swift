import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `entitled-stores reconcile` with Stripe: memberships made by webhook events through a real receiver,
/// then Stripe's stand-in telling what the missed events would have (a renewed period, a cancellation,
/// a failed charge, renewal turned off); each applied once, with the reason `reconciliation`. With
/// `--auth` on `entitled`, the receiver's writer token does it and a check token is refused.
// One test at a time: each runs entitled, entitled-stores and stand-ins, and the suites' tests all at once
// starved the rest of the full run (timing tests elsewhere ran out of time).
@Suite(.serialized) struct StripeReconciliationTests {
    static let now = StripeFixtures.now
    static let day: Int64 = 86_400

    /// A subscription bought by `user`, its customer.subscription.created delivered to `stores`.
    static func subscribe(_ id: String, user: String, periodEnd: Int64, _ sync: StoreSyncHarness, _ stores: RunningStores) throws {
        let subscription = StoreSyncHarness.stripeSubscription(id, user: user, periodEnd: periodEnd, invoice: "in_\(id)_1")
        try sync.setStripe(subscription)
        let body = StoreSyncHarness.stripeEvent("evt_\(id)", type: "customer.subscription.created", created: now - 100, object: subscription)
        let reply = try stores.post("/stripe", body: body, headers: StripeFixtures.signed(body))
        #expect(reply.body == "applied\n", "\(reply.status) \(reply.body)")
    }

    @Test func eachMissedChangeIsAppliedAsItsEventOnceWithTheReasonReconciliation() async throws {
        let sync = try StoreSyncHarness([.stripe])
        let stores = try sync.receiver()
        let now = Self.now, day = Self.day
        for (id, user) in [("sub_renew", "s-renew"), ("sub_cancel", "s-cancel"), ("sub_due", "s-due"), ("sub_off", "s-off"), ("sub_agree", "s-agree")] {
            try Self.subscribe(id, user: user, periodEnd: now + day, sync, stores)
        }
        // Its period ended an hour ago: expired by time, willRenew still set.
        try Self.subscribe("sub_lapsed", user: "s-lapsed", periodEnd: now - 3600, sync, stores)

        // What happened since, unheard.
        try sync.setStripe(all: [
            StoreSyncHarness.stripeSubscription("sub_renew", user: "s-renew", periodEnd: now + 31 * day, invoice: "in_sub_renew_2"),
            StoreSyncHarness.stripeSubscription("sub_cancel", user: "s-cancel", status: "canceled", periodEnd: now + day, invoice: "in_sub_cancel_1"),
            StoreSyncHarness.stripeSubscription("sub_due", user: "s-due", status: "past_due", periodEnd: now + 31 * day, invoice: "in_sub_due_2"),
            StoreSyncHarness.stripeSubscription("sub_off", user: "s-off", periodEnd: now + day, invoice: "in_sub_off_1", cancelAtPeriodEnd: true),
            StoreSyncHarness.stripeSubscription("sub_lapsed", user: "s-lapsed", status: "canceled", periodEnd: now - 3600, invoice: "in_sub_lapsed_1"),
        ])

        let run = try await sync.run("reconcile")
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("stripe: checked 6, corrected 5, failed 0 (billing_issue 1, cancellation 1, expiration 2, renewal 1)"), "\(run.output)")
        for (id, user, change) in [
            ("sub_renew", "s-renew", "renewal"), ("sub_cancel", "s-cancel", "expiration"), ("sub_due", "s-due", "billing_issue"),
            ("sub_off", "s-off", "cancellation"), ("sub_lapsed", "s-lapsed", "expiration"),
        ] {
            let membership = try sync.membership(original: id)
            #expect(run.output.contains("reconciled stripe membership \(membership.id) of \(user): \(change)"), "\(id): \(run.output)")
            let newest = try #require(try sync.history(user).first)
            #expect(newest.action == change && newest.reason == "reconciliation", "\(id): \(newest)")
        }
        let renewed = try sync.membership(original: "sub_renew")
        #expect(renewed.isActive && renewed.renewsCount == 1)
        #expect(renewed.expiresAt.flatMap(ProtocolTimeForTests.seconds) == now + 31 * day)
        #expect(renewed.transactions.map(\.id) == ["in_sub_renew_1", "in_sub_renew_2"])
        let canceled = try sync.membership(original: "sub_cancel")
        #expect(!canceled.isActive && !canceled.willRenew)
        let due = try sync.membership(original: "sub_due")
        #expect(due.renewState == "billing_issue" && due.isActive)
        #expect(due.gracePeriodExpiresAt.flatMap(ProtocolTimeForTests.seconds) == now + day + 7 * day)
        let off = try sync.membership(original: "sub_off")
        #expect(off.isActive && !off.willRenew)
        #expect(try sync.membership(original: "sub_lapsed").willRenew == false)
        #expect(try sync.stripe?.traffic().requests == 6, "one Retrieve a subscription a membership")

        let trails = try ["s-renew", "s-cancel", "s-due", "s-off", "s-agree", "s-lapsed"].map { try sync.history($0).count }
        let again = try await sync.run("reconcile")
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("stripe: checked 6, corrected 0, failed 0\n"), "\(again.output)")
        #expect(try ["s-renew", "s-cancel", "s-due", "s-off", "s-agree", "s-lapsed"].map { try sync.history($0).count } == trails)
    }

    @Test func theMembershipOfPeriodsPaidAfterARefundIsReconciledThroughItsSubscription() async throws {
        // After a refund, the periods paid later are a membership whose original transaction is `sub_gen~2`
        // (StripeReceiver+Successor); Stripe knows only `sub_gen`, so that is what reconciliation asks.
        let sync = try StoreSyncHarness([.stripe])
        let stores = try sync.receiver()
        let now = Self.now, day = Self.day
        try Self.subscribe("sub_gen", user: "s-gen", periodEnd: now + day, sync, stores)
        let refund = StripeFixtures.refundEvent("evt_gen_refund", created: now - 90, invoice: "in_sub_gen_1")
        #expect(try stores.post("/stripe", body: refund, headers: StripeFixtures.signed(refund)).body == "applied\n")
        let paid = StoreSyncHarness.stripeSubscription("sub_gen", user: "s-gen", periodEnd: now + 31 * day, invoice: "in_sub_gen_2")
        let renewal = StoreSyncHarness.stripeEvent("evt_gen_paid", created: now - 80, object: paid)
        #expect(try stores.post("/stripe", body: renewal, headers: StripeFixtures.signed(renewal)).body == "applied\n")
        let successor = try sync.membership(original: "sub_gen~2")
        #expect(successor.isActive)

        // Canceled since, unheard.
        try sync.setStripe(StoreSyncHarness.stripeSubscription("sub_gen", user: "s-gen", status: "canceled", periodEnd: now - 60, invoice: "in_sub_gen_2"))
        let run = try await sync.run("reconcile")
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("reconciled stripe membership \(successor.id) of s-gen: expiration"), "\(run.output)")
        #expect(!run.output.contains("failed 1"), "\(run.output)")
        #expect(try sync.membership(original: "sub_gen~2").isActive == false)
        #expect(try sync.membership(original: "sub_gen").status == "revoked")
    }

    @Test func withAuthTheWriterTokenReconcilesAndACheckTokenIsRefusedClearly() async throws {
        let sync = try StoreSyncHarness([.stripe], tokens: [.admin, .writer, .check])
        sync.tokenFile = try sync.writeTokenFile(.writer)
        let stores = try sync.receiver()
        try Self.subscribe("sub_auth", user: "s-auth", periodEnd: Self.now + Self.day, sync, stores)
        try sync.setStripe(StoreSyncHarness.stripeSubscription("sub_auth", user: "s-auth", periodEnd: Self.now + 31 * Self.day, invoice: "in_sub_auth_2"))

        sync.tokenFile = try sync.writeTokenFile(.check)
        let refused = try await sync.run("reconcile")
        #expect(refused.status == 3, "\(refused.output)")
        #expect(refused.output.contains("stripe: checked 0, corrected 0, failed 0; stopped: entitled did not list the memberships"), "\(refused.output)")
        #expect(refused.output.contains("listing every membership of a source needs the writer or admin role"), "\(refused.output)")
        #expect(refused.output.contains("give --token-file a token of the writer role"), "\(refused.output)")
        #expect(try sync.stripe?.traffic().requests == 0, "nothing is asked of Stripe when entitled does not list")
        #expect(try sync.membership(original: "sub_auth").renewsCount == 0)

        sync.tokenFile = try sync.writeTokenFile(.writer)
        let run = try await sync.run("reconcile")
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("stripe: checked 1, corrected 1, failed 0 (renewal 1)"), "\(run.output)")
        #expect(try sync.membership(original: "sub_auth").renewsCount == 1)
    }
}
