import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `entitled-stores import --stripe-subscriptions / --stripe-customers / --stripe-all`: a real `entitled`,
/// the real import process, and the stand-in of Stripe's API. Canceled subscriptions come too (Stripe's list
/// leaves them out unless asked for `status=all`), each dated at its `start_date`, in the state a
/// `customer.subscription.updated` would have left it; a listing is journaled a page at a time.
// One test at a time: each runs entitled, entitled-stores and stand-ins, and the suites' tests all at once
// starved the rest of the full run (timing tests elsewhere ran out of time).
@Suite(.serialized) struct StripeImportTests {
    let harness: ImportHarness
    let store: StripeImportStore

    init() throws {
        harness = try ImportHarness()
        store = try StripeImportStore()
        harness.storeArguments = store.arguments
    }

    static var now: Int64 { Int64(Date().timeIntervalSince1970) }
    static func seconds(_ time: String?) -> Int64? { time.flatMap(ProtocolTime.milliseconds).map { $0 / 1000 } }
    static let day: Int64 = 86_400

    @Test func subscriptionsByIdComeInTheirState() async throws {
        let now = Self.now
        let day = Self.day
        typealias Store = StripeImportStore
        try store.serve([
            Store.subscription("sub_active", started: now - 200 * day, periodEnd: now + 10 * day, user: "s_active"),
            Store.subscription("sub_trial", status: "trialing", started: now - 3 * day, periodEnd: now + 4 * day, user: "s_trial"),
            Store.subscription("sub_pastdue", status: "past_due", started: now - 62 * day, periodStart: now - 2 * day, periodEnd: now + 28 * day, user: "s_pastdue"),
            Store.subscription("sub_canceled", status: "canceled", started: now - 100 * day, periodEnd: now - 5 * day, user: "s_canceled"),
            Store.subscription("sub_customer", customer: "cus_c", started: now - 30 * day, periodEnd: now + day, user: nil),
            Store.subscription("sub_ending", started: now - 45 * day, periodEnd: now + 15 * day, user: "s_ending", cancelAtPeriodEnd: true),
            Store.subscription("sub_incomplete", status: "incomplete", started: now, periodEnd: now + 30 * day, user: "s_incomplete"),
        ])
        let ids = ["sub_active", "sub_trial", "sub_pastdue", "sub_canceled", "sub_customer", "sub_ending", "sub_incomplete", "sub_missing"]
        let run = try await harness.run(["--stripe-subscriptions", try harness.file("stripe.txt", ids)])
        #expect(run.status == 3, "\(run.output)")
        #expect(run.output.contains("imported 6, unchanged 0, skipped 1, failed 1"), "\(run.output)")
        #expect(run.reason("stripe:sub_missing").hasPrefix("not_found: "), "\(run.reason("stripe:sub_missing"))")
        #expect(run.status("stripe:sub_incomplete") == "skipped")

        let active = try harness.membership(original: "sub_active")
        #expect(active.user == "s_active")
        #expect(active.source == "stripe")
        #expect(active.environment == "sandbox")
        #expect(Self.seconds(active.createdAt) == now - 200 * day)
        #expect(Self.seconds(active.expiresAt) == now + 10 * day)
        #expect(active.status == "active")
        #expect(active.willRenew)
        #expect(active.transactions.map(\.id) == ["in_active"])
        #expect(try !harness.active("s_active", "prod_pro", at: (now - 201 * day) * 1000))
        #expect(try harness.history("s_active").allSatisfy { $0.reason == "import" })

        let trial = try harness.membership(original: "sub_trial")
        #expect(trial.status == "trialing")
        #expect(trial.periodType == "trial")

        // Past due: Stripe moved the period on and retries the charge. Access is the paid period and the
        // grace days after it (7), as the live receiver gives it, not the unpaid period.
        let pastDue = try harness.membership(original: "sub_pastdue")
        #expect(pastDue.status == "past_due")
        #expect(pastDue.billingIssueDetectedAt != nil)
        #expect(Self.seconds(pastDue.expiresAt) == now - 2 * day)
        #expect(Self.seconds(pastDue.gracePeriodExpiresAt) == now + 5 * day)
        #expect(pastDue.isActive)
        // Its newest invoice is the unpaid one: not the purchase's transaction.
        #expect(pastDue.transactions.map(\.id) == ["sub_pastdue"])

        let canceled = try harness.membership(original: "sub_canceled")
        #expect(canceled.status == "expired")
        #expect(canceled.willRenew == false)
        #expect(try harness.active("s_canceled", "prod_pro", at: (now - 6 * day) * 1000))

        #expect(try harness.membership(original: "sub_customer").user == "cus_c")

        let ending = try harness.membership(original: "sub_ending")
        #expect(ending.status == "canceled")
        #expect(ending.willRenew == false)
        #expect(ending.unsubscribeDetectedAt != nil)
        #expect(ending.isActive)
        #expect(try harness.memberships(original: "sub_incomplete").isEmpty)
    }

    @Test func aCustomersSubscriptionsComeCanceledOnesIncluded() async throws {
        let now = Self.now
        let day = Self.day
        typealias Store = StripeImportStore
        try store.serve([
            Store.subscription("sub_c1a", customer: "cus_1", started: now - 90 * day, periodEnd: now + 5 * day, user: "c_one"),
            Store.subscription("sub_c1b", status: "canceled", customer: "cus_1", started: now - 300 * day, periodEnd: now - 60 * day, user: "c_one", product: "prod_old"),
            Store.subscription("sub_c2a", status: "canceled", customer: "cus_2", started: now - 40 * day, periodEnd: now - 10 * day, user: nil),
            Store.subscription("sub_c3a", customer: "cus_3", started: now - 10 * day, periodEnd: now + 20 * day, user: "c_three"),
        ])
        let run = try await harness.run(["--stripe-customers", try harness.file("customers.txt", ["cus_1", "cus_2"])])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("imported 3, unchanged 0, skipped 0, failed 0"), "\(run.output)")
        #expect(try harness.membership(original: "sub_c1b").status == "expired")
        #expect(try harness.membership(original: "sub_c2a").user == "cus_2")
        #expect(try harness.memberships(original: "sub_c3a").isEmpty)
        #expect(try harness.client.allMemberships(user: "c_one").map(\.productId).sorted() == ["prod_old", "prod_pro"])
    }

    /// `count` active subscriptions created a second apart, newest last.
    static func many(_ count: Int, prefix: String = "sub_m") -> [[String: Any]] {
        let now = Self.now
        return (0..<count).map { index in
            StripeImportStore.subscription(
                "\(prefix)\(index)", customer: "cus_m\(index)", started: now - 30 * day, periodEnd: now + 20 * day, user: "m_\(index)",
                created: now - 30 * day + Int64(index)
            )
        }
    }

    @Test func theWholeAccountComesInPagesOf100AndAKilledRunResumesFromItsLastFinishedPage() async throws {
        try store.serve(Self.many(350))
        // Each page listed in 2 s: the first page's hundred are imported and its end journaled while the
        // second is listed, and the run is killed then.
        try store.standIn.set(["delay": 2])
        let first = try harness.start(["--stripe-all"])
        let atKill = try await ImportHarness.onThread { () -> Int in
            ImportHarness.wait { !harness.journalCursors().isEmpty }
            first.kill()
            return try harness.membershipCount()
        }
        #expect(atKill >= 100 && atKill < 350, "killed midway, not before or after: \(atKill)")
        let finishedPages = harness.journalCursors().count
        #expect(finishedPages >= 1 && finishedPages < 4, "\(harness.journalCursors())")
        try store.standIn.set(["delay": 0])

        try store.resetCount()
        let second = try await harness.run(["--stripe-all"])
        #expect(second.status == 0, "\(second.output)")
        // 350 subscriptions are four pages; the second run lists from the last page the first finished.
        #expect(try store.requests() == 4 - finishedPages, "\(harness.journalCursors())")
        if atKill > finishedPages * 100 {
            // Those of the unfinished page that the first run imported are not asked again.
            #expect(second.output.contains("finished by an earlier run of this job"), "\(second.output)")
        }
        #expect(try harness.membershipCount() == 350)
        for index in stride(from: 0, to: 350, by: 23) {
            #expect(try harness.memberships(original: "sub_m\(index)").count == 1)
        }
        #expect(harness.journalCursors().last?.hasSuffix("\tend") == true)

        // Run again: the journal says the listing ended; Stripe is not asked.
        try store.resetCount()
        #expect(try await harness.run(["--stripe-all"]).status == 0)
        #expect(try store.requests() == 0)
    }

    @Test func aSubscriptionThatFailedInAListingIsImportedByTheNextRun() async throws {
        var subscriptions = Self.many(150)
        // One of the first page that Stripe served without its items: it cannot be imported.
        var broken = subscriptions[120]
        broken["items"] = ["object": "list", "data": [[String: Any]]()]
        subscriptions[120] = broken
        try store.serve(subscriptions)
        let first = try await harness.run(["--stripe-all"])
        #expect(first.status == 3, "\(first.output)")
        #expect(first.output.contains("imported 149, unchanged 0, skipped 0, failed 1"), "\(first.output)")
        #expect(first.status("stripe:sub_m120") == "failed")

        // Fixed at the source; the same command again imports it, and asks nothing of the rest.
        try store.serve(Array(Self.many(150)[120...120]))
        let second = try await harness.run(["--stripe-all"])
        #expect(second.status == 0, "\(second.output)")
        #expect(second.output.contains("imported 1, unchanged 0, skipped 0, failed 0"), "\(second.output)")
        #expect(try harness.membership(original: "sub_m120").user == "m_120")
        #expect(try harness.membershipCount() == 150)
    }

    @Test func importingTwiceChangesNothing() async throws {
        let now = Self.now
        let day = Self.day
        typealias Store = StripeImportStore
        try store.serve([
            Store.subscription("sub_i1", started: now - 200 * day, periodEnd: now + 10 * day, user: "i_1"),
            Store.subscription("sub_i2", status: "trialing", started: now - 3 * day, periodEnd: now + 4 * day, user: "i_2"),
            Store.subscription("sub_i3", status: "past_due", started: now - 62 * day, periodStart: now - 2 * day, periodEnd: now + 28 * day, user: "i_3"),
            Store.subscription("sub_i4", status: "canceled", started: now - 100 * day, periodEnd: now - 5 * day, user: "i_4"),
            Store.subscription("sub_i5", started: now - 45 * day, periodEnd: now + 15 * day, user: "i_5", cancelAtPeriodEnd: true),
        ])
        let path = try harness.file("stripe.txt", ["sub_i1", "sub_i2", "sub_i3", "sub_i4", "sub_i5"])
        #expect(try await harness.run(["--stripe-subscriptions", path]).status == 0)
        let users = ["i_1", "i_2", "i_3", "i_4", "i_5"]
        let trails = try users.map { try harness.history($0).count }
        let other = try await harness.run(["--stripe-subscriptions", path, "--job", "again"])
        #expect(other.status == 0, "\(other.output)")
        #expect(other.output.contains("imported 0, unchanged 5, skipped 0, failed 0"), "\(other.output)")
        // The whole account over the same subscriptions: nothing new either.
        let all = try await harness.run(["--stripe-all"])
        #expect(all.output.contains("imported 0, unchanged 5, skipped 0, failed 0"), "\(all.output)")
        #expect(try users.map { try harness.history($0).count } == trails)
        #expect(try harness.membershipCount() == 5)
    }
}
