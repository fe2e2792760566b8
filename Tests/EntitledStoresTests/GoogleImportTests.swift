import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `entitled-stores import --google-subscriptions / --google-products`: a real `entitled`, the real import
/// process, and the stand-in of Google's OAuth and Play Developer API. Each purchase comes in dated at its
/// `startTime` (or `purchaseTimeMillis`), with the renewals its order id counts, in the state the live
/// receiver maps the same resource to.
// One test at a time: each runs entitled, entitled-stores and stand-ins, and the suites' tests all at once
// starved the rest of the full run (timing tests elsewhere ran out of time).
@Suite(.serialized) struct GoogleImportTests {
    let harness: ImportHarness
    let store: GoogleImportStore

    init() throws {
        harness = try ImportHarness()
        store = try GoogleImportStore()
        harness.storeArguments = store.arguments
    }

    static func milliseconds(_ time: String?) -> Int64? { time.flatMap(ProtocolTime.milliseconds) }
    static var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    @Test func subscriptionsComeInTheStateThePlayAPIGives() async throws {
        let now = Self.now
        typealias Store = GoogleImportStore
        try store.serve(subscriptions: [
            "tok-active": Store.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.1111-2222-3333-44444..4", started: now - 150 * .day, expiry: now + 20 * .day, user: "g_active"),
            "tok-grace": Store.subscription("SUBSCRIPTION_STATE_IN_GRACE_PERIOD", order: "GPA.2222-3333-4444-55555..0", started: now - 40 * .day, expiry: now + 3 * .day, user: "g_grace"),
            "tok-hold": Store.subscription("SUBSCRIPTION_STATE_ON_HOLD", order: "GPA.3333-4444-5555-66666..1", started: now - 70 * .day, expiry: now - 2 * .day, user: "g_hold"),
            "tok-paused": Store.subscription("SUBSCRIPTION_STATE_PAUSED", order: "GPA.4444-5555-6666-77777..2", started: now - 100 * .day, expiry: now - .day, user: "g_paused"),
            "tok-canceled": Store.subscription("SUBSCRIPTION_STATE_CANCELED", order: "GPA.5555-6666-7777-88888", started: now - 20 * .day, expiry: now + 10 * .day, autoRenew: false, user: "g_canceled"),
            "tok-expired": Store.subscription("SUBSCRIPTION_STATE_EXPIRED", order: "GPA.6666-7777-8888-99999..5", started: now - 220 * .day, expiry: now - 30 * .day, autoRenew: false, user: "g_expired"),
            "tok-file": Store.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.7777-8888-9999-00000", started: now - 5 * .day, expiry: now + 25 * .day, user: "g_token_user", test: true),
            "tok-nouser": Store.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.8888-9999-0000-11111", started: now - 5 * .day, expiry: now + 25 * .day, user: nil),
            "tok-pending": Store.subscription("SUBSCRIPTION_STATE_PENDING", order: "GPA.9999-0000-1111-22222", started: now, expiry: now + 30 * .day, user: "g_pending"),
        ])
        let tokens = ["tok-active", "tok-grace", "tok-hold", "tok-paused", "tok-canceled", "tok-expired", "tok-file g_file", "tok-nouser", "tok-unknown", "tok-pending"]
        let run = try await harness.run(["--google-subscriptions", try harness.file("google.txt", tokens)])
        #expect(run.status == 3, "\(run.output)")
        #expect(run.output.contains("imported 7, unchanged 0, skipped 1, failed 2"), "\(run.output)")

        let active = try harness.membership(original: "tok-active")
        #expect(active.user == "g_active")
        #expect(active.source == "play_store")
        #expect(Self.milliseconds(active.createdAt) == now - 150 * .day)
        // `..4` is the fifth renewal.
        #expect(active.renewsCount == 5)
        #expect(active.transactions.map(\.id) == ["GPA.1111-2222-3333-44444..4"])
        #expect(active.status == "active")
        #expect(active.willRenew)
        #expect(Self.milliseconds(active.expiresAt) == now + 20 * .day)
        #expect(try !harness.active("g_active", "premium_monthly", at: now - 151 * .day))
        #expect(try harness.active("g_active", "premium_monthly", at: now - 149 * .day))
        #expect(try harness.history("g_active").allSatisfy { $0.reason == "import" })
        #expect((run.line("play_store:tok-active")?["notes"] as? [String])?.first?.hasPrefix("renewal times not given by Google Play") == true)

        let grace = try harness.membership(original: "tok-grace")
        #expect(grace.renewsCount == 1)
        #expect(grace.status == "past_due")
        #expect(grace.isActive)
        #expect(Self.milliseconds(grace.gracePeriodExpiresAt) == now + 3 * .day)

        let hold = try harness.membership(original: "tok-hold")
        #expect(hold.renewState == "billing_issue")
        #expect(hold.billingIssueDetectedAt != nil)
        #expect(!hold.isActive)

        let paused = try harness.membership(original: "tok-paused")
        #expect(paused.status == "paused")
        #expect(paused.pausedAt != nil)
        #expect(!paused.isActive)

        // Renewal turned off: access to the period's end, as a cancellation would have left it.
        let canceled = try harness.membership(original: "tok-canceled")
        #expect(canceled.isActive)
        #expect(canceled.willRenew == false)
        #expect(canceled.status == "canceled")
        #expect(canceled.unsubscribeDetectedAt != nil)
        #expect(canceled.renewsCount == 0)

        let expired = try harness.membership(original: "tok-expired")
        #expect(expired.status == "expired")
        #expect(expired.willRenew == false)
        #expect(expired.renewsCount == 6)
        #expect(try harness.active("g_expired", "premium_monthly", at: now - 31 * .day))

        let named = try harness.membership(original: "tok-file")
        #expect(named.user == "g_file")
        #expect(named.environment == "sandbox")
        #expect(try harness.client.send(.memberships(user: "g_token_user")).memberships == [])

        #expect(run.reason("play_store:tok-nouser").hasPrefix("no_user: "), "\(run.reason("play_store:tok-nouser"))")
        #expect(run.reason("play_store:tok-unknown").hasPrefix("not_found: "), "\(run.reason("play_store:tok-unknown"))")
        #expect(run.status("play_store:tok-pending") == "skipped")
        #expect(try harness.memberships(original: "tok-nouser").isEmpty)
        #expect(try harness.memberships(original: "tok-pending").isEmpty)
        #expect(run.output.contains("Google Play subscriptions  10/10"), "\(run.output)")
    }

    @Test func aProductIsALifetimeGrantAndItsCancellationARefund() async throws {
        let now = Self.now
        try store.serve(products: [
            "tokp-1": GoogleImportStore.product(order: "GPA.1000-2000-3000-40001", purchased: now - 40 * .day, user: "p_one"),
            "tokp-2": GoogleImportStore.product(order: "GPA.1000-2000-3000-40002", purchased: now - 10 * .day, user: nil),
            "tokp-canceled": GoogleImportStore.product(order: "GPA.1000-2000-3000-40003", purchased: now - 10 * .day, state: 1, user: "p_three"),
            "tokp-pending": GoogleImportStore.product(order: "GPA.1000-2000-3000-40004", purchased: now - .day, state: 2, user: "p_four"),
        ])
        let path = try harness.file("products.txt", ["lifetime_pro tokp-1", "lifetime_pro tokp-2 p_two", "lifetime_pro tokp-canceled", "lifetime_pro tokp-pending"])
        let run = try await harness.run(["--google-products", path])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("imported 2, unchanged 0, skipped 2, failed 0"), "\(run.output)")
        let one = try harness.membership(original: "tokp-1")
        #expect(one.user == "p_one")
        #expect(one.productId == "lifetime_pro")
        #expect(one.expiresAt == nil)
        #expect(one.isActive)
        #expect(Self.milliseconds(one.createdAt) == now - 40 * .day)
        #expect(one.transactions.map(\.id) == ["GPA.1000-2000-3000-40001"])
        #expect(try !harness.active("p_one", "lifetime_pro", at: now - 41 * .day))
        #expect(try harness.membership(original: "tokp-2").user == "p_two")
        // Canceled (refunded) or pending before any import: nothing to grant.
        #expect(run.status("play_store:lifetime_pro:tokp-canceled") == "skipped")
        #expect(run.status("play_store:lifetime_pro:tokp-pending") == "skipped")
        #expect(try harness.memberships(original: "tokp-canceled").isEmpty)

        // Refunded since: the next import takes it back.
        try store.serve(products: ["tokp-1": GoogleImportStore.product(order: "GPA.1000-2000-3000-40001", purchased: now - 40 * .day, state: 1, user: "p_one")])
        let later = try await harness.run(["--google-products", path, "--job", "later"])
        #expect(later.status == 0, "\(later.output)")
        #expect(later.status("play_store:lifetime_pro:tokp-1") == "imported")
        let refunded = try harness.membership(original: "tokp-1")
        #expect(refunded.status == "revoked")
        #expect(try !harness.active("p_one", "lifetime_pro"))
        #expect(later.status("play_store:lifetime_pro:tokp-2") == "unchanged")
    }

    @Test func importingTwiceChangesNothing() async throws {
        let now = Self.now
        typealias Store = GoogleImportStore
        try store.serve(subscriptions: [
            "tok-a": Store.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.1111-0000-0000-00001..7", started: now - 240 * .day, expiry: now + 5 * .day, user: "i_a"),
            "tok-b": Store.subscription("SUBSCRIPTION_STATE_ON_HOLD", order: "GPA.1111-0000-0000-00002..0", started: now - 50 * .day, expiry: now - 3 * .day, user: "i_b"),
            "tok-c": Store.subscription("SUBSCRIPTION_STATE_PAUSED", order: "GPA.1111-0000-0000-00003..1", started: now - 80 * .day, expiry: now - 3 * .day, user: "i_c"),
            "tok-d": Store.subscription("SUBSCRIPTION_STATE_CANCELED", order: "GPA.1111-0000-0000-00004", started: now - 9 * .day, expiry: now + 21 * .day, autoRenew: false, user: "i_d"),
        ])
        try store.serve(products: ["tok-e": Store.product(order: "GPA.1111-0000-0000-00005", purchased: now - 9 * .day, user: "i_e")])
        let subscriptions = try harness.file("subscriptions.txt", ["tok-a", "tok-b", "tok-c", "tok-d"])
        let products = try harness.file("products.txt", ["lifetime_pro tok-e"])
        #expect(try await harness.run(["--google-subscriptions", subscriptions, "--google-products", products]).status == 0)
        let users = ["i_a", "i_b", "i_c", "i_d", "i_e"]
        let trails = try users.map { try harness.history($0).count }

        let same = try await harness.run(["--google-subscriptions", subscriptions, "--google-products", products])
        #expect(same.output.contains("imported 0, unchanged 0, skipped 0, failed 0"), "\(same.output)")
        #expect(same.output.contains("5 finished by an earlier run of this job"), "\(same.output)")
        let other = try await harness.run(["--google-subscriptions", subscriptions, "--google-products", products, "--job", "again"])
        #expect(other.status == 0, "\(other.output)")
        #expect(other.output.contains("imported 0, unchanged 5, skipped 0, failed 0"), "\(other.output)")
        #expect(try users.map { try harness.history($0).count } == trails)
        #expect(try harness.membershipCount() == 5)
    }
}
