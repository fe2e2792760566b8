import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `entitled-stores import --apple-transactions`: a real `entitled`, the real import process, and the App
/// Store Server API's stand-ins (production and sandbox) serving signed transactions and statuses. Each
/// purchase must come in as its notifications would have made it: dated at the store's sale, a renewal per
/// later transaction at its purchase, then its status and renewal info.
// One test at a time: each runs entitled, entitled-stores and stand-ins, and the suites' tests all at once
// starved the rest of the full run (timing tests elsewhere ran out of time).
@Suite(.serialized) struct AppleImportTests {
    let harness: ImportHarness
    let store: AppleImportStore
    static let user = "5d0c6a4e-3b1f-4c2a-9e7d-000000000001"

    init() throws {
        harness = try ImportHarness()
        store = try AppleImportStore()
        harness.storeArguments = store.arguments
    }

    static func milliseconds(_ time: String?) -> Int64? { time.flatMap(ProtocolTime.milliseconds) }

    @Test func aSubscriberOfManyRenewalsComesWithItsHistoryPagedFromTheStore() async throws {
        let now = AppleFixtures.nowMilliseconds
        let transactions = AppleImportStore.subscription("1000000100", periods: 14, lastExpires: now + 20 * .day, trial: true, user: Self.user)
        let bought = AppleImportStore.purchaseDates(transactions)
        try store.serve([.init(transactions: transactions, status: 1, renewal: ["autoRenewStatus": 0])])
        // Five a page: the history comes in three pages.
        try store.production.set(["page_size": 5])
        let run = try await harness.run(["--apple-transactions", try harness.file("apple.txt", ["1000000100"])])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("imported 1, unchanged 0, skipped 0, failed 0"), "\(run.output)")
        #expect(run.status("app_store:1000000100") == "imported")

        let membership = try harness.membership(original: "1000000100")
        #expect(membership.user == Self.user)
        #expect(membership.source == "app_store")
        #expect(membership.environment == "production")
        #expect(Self.milliseconds(membership.createdAt) == bought[0])
        #expect(membership.renewsCount == 13)
        #expect(membership.transactions.map(\.id) == transactions.map { $0["transactionId"] as? String ?? "" })
        #expect(membership.transactions.first?.type == "trial_started")
        #expect(membership.transactions.map { Self.milliseconds($0.time) } == bought.map(Optional.some))
        #expect(membership.periodType == "normal")
        #expect(Self.milliseconds(membership.expiresAt) == now + 20 * .day)
        // autoRenewStatus 0: turned off, still paid for.
        #expect(membership.willRenew == false)
        #expect(membership.unsubscribeDetectedAt != nil)
        #expect(membership.status == "canceled")
        #expect(membership.isActive)

        // As of the past: nothing before the sale, the trial in its week, a renewal's period in its month.
        #expect(try !harness.active(Self.user, "premium.monthly", at: bought[0] - .day))
        #expect(try harness.active(Self.user, "premium.monthly", at: bought[0] + .day))
        #expect(try harness.active(Self.user, "premium.monthly", at: bought[6] + 10 * .day))
        let past = try #require(try harness.client.send(.memberships(user: Self.user, at: ProtocolTime.string(milliseconds: bought[0] + .day))).memberships?.first)
        #expect(past.status == "trialing")

        let history = try harness.history(Self.user)
        #expect(history.allSatisfy { $0.reason == "import" }, "\(history.map(\.reason))")
        #expect(history.last?.action == "grant")
        let renewals = history.filter { $0.action == "renewal" }
        #expect(renewals.count == 13)
        #expect(renewals.reversed().map { Self.milliseconds($0.eventTime) } == bought.dropFirst().map(Optional.some))
        #expect(history.first?.action == "cancellation")
        // RevenueCat's first seen is the sale's time, not the import's.
        let customer = try #require(try harness.client.send(.customer(user: Self.user)).customer)
        #expect(Self.milliseconds(customer.firstSeen) == bought[0])
        #expect(customer.activeProducts == ["premium.monthly"])
        // Three pages of history and one status; production knew it, so the sandbox was not asked.
        #expect(try store.production.traffic().requests == 4)
        #expect(try store.sandbox.traffic().requests == 0)
    }

    @Test func aLapseBetweenPeriodsIsNoAccessAsOfThen() async throws {
        let now = AppleFixtures.nowMilliseconds
        // Two months, a lapse of twenty days, then a resubscription of two months more.
        var transactions = AppleImportStore.subscription("1000001700", periods: 4, lastExpires: now + 10 * .day, user: Self.user)
        for index in 0..<2 {
            for field in ["purchaseDate", "expiresDate"] { transactions[index][field] = (transactions[index][field] as? Int64 ?? 0) - 20 * .day }
            transactions[index]["originalPurchaseDate"] = transactions[0]["purchaseDate"]
        }
        for index in 2..<4 { transactions[index]["originalPurchaseDate"] = transactions[0]["purchaseDate"] }
        transactions[2]["transactionReason"] = "PURCHASE"
        try store.serve([.init(transactions: transactions, status: 1)])
        let run = try await harness.run(["--apple-transactions", try harness.file("apple.txt", ["1000001700"])])
        #expect(run.status == 0, "\(run.output)")
        let membership = try harness.membership(original: "1000001700")
        #expect(membership.renewsCount == 3)
        #expect(membership.isActive)
        let lapsedAt = transactions[1]["expiresDate"] as? Int64 ?? 0
        #expect(try harness.active(Self.user, "premium.monthly", at: lapsedAt - .day))
        #expect(try !harness.active(Self.user, "premium.monthly", at: lapsedAt + 10 * .day))
        #expect(try harness.active(Self.user, "premium.monthly", at: lapsedAt + 21 * .day))
    }

    @Test func eachStatusAndRenewalInfoIsAppliedAsItsNotificationWouldBe() async throws {
        let now = AppleFixtures.nowMilliseconds
        let users = (0..<6).map { "5d0c6a4e-3b1f-4c2a-9e7d-00000000020\($0)" }
        let expired = AppleImportStore.subscription("1000000200", periods: 3, lastExpires: now - 10 * .day, user: users[0])
        let retrying = AppleImportStore.subscription("1000000300", periods: 2, lastExpires: now - 2 * .day, user: users[1])
        let grace = AppleImportStore.subscription("1000000400", periods: 2, lastExpires: now - .day, user: users[2])
        var revoked = AppleImportStore.subscription("1000000500", periods: 2, lastExpires: now + 20 * .day, user: users[3])
        revoked[1]["revocationDate"] = now - .day
        revoked[1]["revocationReason"] = 0
        let renewing = AppleImportStore.subscription("1000000600", periods: 2, lastExpires: now + 20 * .day, user: users[4])
        let named = AppleImportStore.subscription("1000000700", periods: 1, lastExpires: now + 20 * .day, user: users[5])
        let turnedOff = AppleImportStore.subscription("1000000750", periods: 1, lastExpires: now + 20 * .day, user: "5d0c6a4e-3b1f-4c2a-9e7d-000000000275")
        var upgraded = AppleImportStore.subscription("1000000650", periods: 3, lastExpires: now + 20 * .day, user: "5d0c6a4e-3b1f-4c2a-9e7d-000000000265")
        upgraded[2]["productId"] = "premium.yearly"
        try store.serve([
            .init(transactions: expired, status: 2, renewal: ["autoRenewStatus": 0, "expirationIntent": 1]),
            .init(transactions: retrying, status: 3, renewal: ["autoRenewStatus": 1, "isInBillingRetryPeriod": true]),
            .init(transactions: grace, status: 4, renewal: ["autoRenewStatus": 1, "isInBillingRetryPeriod": true, "gracePeriodExpiresDate": now + 5 * .day]),
            .init(transactions: revoked, status: 5, renewal: ["autoRenewStatus": 1]),
            .init(transactions: renewing, status: 1, renewal: ["autoRenewStatus": 1]),
            .init(transactions: named, status: 1, renewal: ["autoRenewStatus": 1]),
            .init(transactions: turnedOff, status: 1, renewal: ["autoRenewStatus": 0]),
            .init(transactions: upgraded, status: 1, renewal: ["autoRenewStatus": 1]),
        ])
        let file = try harness.file(
            "apple.txt", ["# original transactions", "1000000200", "1000000300", "1000000400", "", "1000000500", "1000000600", "1000000700 user_from_file", "1000000750", "1000000650"]
        )
        let run = try await harness.run(["--apple-transactions", file])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("imported 8, unchanged 0, skipped 0, failed 0"), "\(run.output)")

        let lapsed = try harness.membership(original: "1000000200")
        #expect(lapsed.status == "expired")
        #expect(lapsed.willRenew == false)
        #expect(lapsed.renewsCount == 2)
        #expect(Self.milliseconds(lapsed.expiresAt) == now - 10 * .day)
        #expect(try harness.active(users[0], "premium.monthly", at: now - 11 * .day))
        #expect(try !harness.active(users[0], "premium.monthly"))

        // Billing retry without a grace period: no access, the issue known.
        let failing = try harness.membership(original: "1000000300")
        #expect(failing.renewState == "billing_issue")
        #expect(failing.billingIssueDetectedAt != nil)
        #expect(failing.gracePeriodExpiresAt == nil)
        #expect(failing.isActive == false)

        // The grace period: access until its end.
        let inGrace = try harness.membership(original: "1000000400")
        #expect(inGrace.status == "past_due")
        #expect(inGrace.isActive)
        #expect(Self.milliseconds(inGrace.gracePeriodExpiresAt) == now + 5 * .day)

        // The newest transaction revoked: a refund, dated at its revocation.
        let refunded = try harness.membership(original: "1000000500")
        #expect(refunded.status == "revoked")
        #expect(Self.milliseconds(refunded.revokedAt) == now - .day)
        #expect(refunded.transactions.last?.revokedAt != nil)
        #expect(try harness.history(users[3]).first.map { ($0.action, Self.milliseconds($0.eventTime)) } ?? ("", nil) == ("refund", now - .day))

        let active = try harness.membership(original: "1000000600")
        #expect(active.status == "active")
        #expect(active.willRenew)
        #expect(active.renewState == "will_renew")
        #expect(active.renewsCount == 1)

        // The file's user wins over the appAccountToken.
        let given = try harness.membership(original: "1000000700")
        #expect(given.user == "user_from_file")
        #expect(try harness.client.send(.memberships(user: users[5])).memberships == [])
        #expect(given.willRenew)

        // A first period whose renewal is off: a cancellation, as DID_CHANGE_RENEWAL_STATUS would have made.
        let ending = try harness.membership(original: "1000000750")
        #expect(ending.willRenew == false)
        #expect(ending.status == "canceled")
        #expect(ending.unsubscribeDetectedAt != nil)
        #expect(ending.isActive)

        // A crossgrade at the last renewal: the membership follows the product.
        let moved = try harness.membership(original: "1000000650")
        #expect(moved.productId == "premium.yearly")
        #expect(moved.renewsCount == 2)
        #expect(try harness.history("5d0c6a4e-3b1f-4c2a-9e7d-000000000265").map(\.action).contains("product_change"))
    }

    @Test func aFamilySharedTrialOfTheSandboxIsImportedAsSuch() async throws {
        let now = AppleFixtures.nowMilliseconds
        let shared = AppleImportStore.subscription(
            "1000000800", periods: 1, lastExpires: now + 5 * .day, trial: true, user: nil, environment: "Sandbox", ownership: "FAMILY_SHARED"
        )
        try store.serve([.init(transactions: shared, status: 1, renewal: ["autoRenewStatus": 1])])
        let run = try await harness.run(["--apple-transactions", try harness.file("apple.txt", ["1000000800\tfamily_member_1"])])
        #expect(run.status == 0, "\(run.output)")
        let membership = try harness.membership(original: "1000000800")
        #expect(membership.user == "family_member_1")
        #expect(membership.ownership == "family_shared")
        #expect(membership.environment == "sandbox")
        #expect(membership.periodType == "trial")
        #expect(membership.status == "trialing")
        #expect(membership.willRenew)
        #expect(Self.milliseconds(membership.createdAt) == now - 2 * .day)
        #expect((run.line("app_store:1000000800")?["notes"] as? [String])?.contains("user given, not named by the App Store") == true)
        // Production did not know it (its history and its status, once each); the sandbox did.
        #expect(try store.production.traffic().requests == 2)
        #expect(try store.sandbox.traffic().requests == 2)
    }

    @Test func aOneTimePurchaseIsALifetimeGrantFromItsSale() async throws {
        let now = AppleFixtures.nowMilliseconds
        try store.serve([.init(transactions: AppleImportStore.oneTime("1000000900", purchased: now - 100 * .day, user: Self.user), status: nil)])
        let run = try await harness.run(["--apple-transactions", try harness.file("apple.txt", ["1000000900"])])
        #expect(run.status == 0, "\(run.output)")
        let membership = try harness.membership(original: "1000000900")
        #expect(membership.productId == "lifetime.unlock")
        #expect(membership.expiresAt == nil)
        #expect(membership.status == "active")
        #expect(Self.milliseconds(membership.createdAt) == now - 100 * .day)
        #expect(try !harness.active(Self.user, "lifetime.unlock", at: now - 101 * .day))
        #expect(try harness.active(Self.user, "lifetime.unlock", at: now - 99 * .day))
        // A one-time purchase has no subscription status to ask for: its history alone.
        #expect(try store.production.traffic().requests == 1)
    }

    @Test func whatCannotBeImportedIsReportedByKindAndTheNextRunFinishesIt() async throws {
        let now = AppleFixtures.nowMilliseconds
        try store.serve([
            .init(transactions: AppleImportStore.subscription("1000001000", periods: 2, lastExpires: now + 9 * .day, user: nil), status: 1),
            .init(transactions: AppleImportStore.subscription("1000001100", periods: 2, lastExpires: now + 9 * .day, user: Self.user), status: 1),
        ])
        let path = try harness.file("apple.txt", ["1000001000", "1999999999", "1000001100"])
        let run = try await harness.run(["--apple-transactions", path])
        #expect(run.status == 3, "\(run.output)")
        #expect(run.output.contains("imported 1, unchanged 0, skipped 0, failed 2"), "\(run.output)")
        #expect(run.status("app_store:1000001000") == "failed")
        #expect(run.reason("app_store:1000001000").hasPrefix("no_user: "), "\(run.reason("app_store:1000001000"))")
        #expect(run.reason("app_store:1999999999").hasPrefix("not_found: "), "\(run.reason("app_store:1999999999"))")
        #expect(run.output.contains("failed no_user: 1"), "\(run.output)")
        #expect(run.output.contains("failed not_found: 1"), "\(run.output)")
        #expect(run.output.contains("some identifiers failed"), "\(run.output)")
        // Standard error is no terminal here: plain lines, nothing redrawn in place.
        #expect(run.output.contains("App Store  3/3  "), "\(run.output)")
        #expect(run.output.contains("2 failed"), "\(run.output)")
        #expect(!run.output.contains("\r") && !run.output.contains("\u{1B}["), "\(run.output)")
        #expect(try harness.memberships(original: "1000001000").isEmpty)

        // The user named in the file, the same command again: the failed one is imported, the finished
        // one is not asked again.
        _ = try harness.file("apple.txt", ["1000001000 user_late", "1999999999", "1000001100"])
        let again = try await harness.run(["--apple-transactions", path])
        #expect(again.status == 3, "\(again.output)")
        #expect(again.output.contains("imported 1, unchanged 0, skipped 0, failed 1"), "\(again.output)")
        #expect(again.output.contains("1 finished by an earlier run of this job, not asked again"), "\(again.output)")
        #expect(try harness.membership(original: "1000001000").user == "user_late")
    }

    @Test func aPurchaseListedTwiceIsImportedOnce() async throws {
        let now = AppleFixtures.nowMilliseconds
        try store.serve([.init(transactions: AppleImportStore.subscription("1000001500", periods: 5, lastExpires: now + 9 * .day, user: Self.user), status: 1)])
        let run = try await harness.run(["--apple-transactions", try harness.file("apple.txt", Array(repeating: "1000001500", count: 6))])
        #expect(run.status == 0, "\(run.output)")
        let membership = try harness.membership(original: "1000001500")
        #expect(membership.renewsCount == 4)
        #expect(membership.transactions.count == 5)
        let history = try harness.history(Self.user)
        #expect(history.filter { $0.action == "grant" }.count == 1)
        #expect(history.filter { $0.action == "renewal" }.count == 4)
        #expect(run.report.count == 1, "one line for the purchase: \(run.report)")
    }

    @Test func aFileNamingALaterTransactionImportsItsSubscription() async throws {
        let now = AppleFixtures.nowMilliseconds
        let transactions = AppleImportStore.subscription("1000001600", periods: 4, lastExpires: now + 9 * .day, user: Self.user)
        try store.serve([.init(transactions: transactions, status: 1)])
        // The newest transaction's id, as an app's backend that kept the latest receipt has it.
        let run = try await harness.run(["--apple-transactions", try harness.file("apple.txt", ["1000001603"])])
        #expect(run.status == 0, "\(run.output)")
        let membership = try harness.membership(original: "1000001600")
        #expect(membership.renewsCount == 3)
        #expect(membership.transactions.count == 4)
        #expect(membership.isActive && membership.willRenew)
    }

    @Test func importingTwiceChangesNothing() async throws {
        let now = AppleFixtures.nowMilliseconds
        let users = ["5d0c6a4e-3b1f-4c2a-9e7d-000000000301", "5d0c6a4e-3b1f-4c2a-9e7d-000000000302", "5d0c6a4e-3b1f-4c2a-9e7d-000000000303"]
        try store.serve([
            .init(transactions: AppleImportStore.subscription("1000001200", periods: 6, lastExpires: now + 9 * .day, trial: true, user: users[0]), status: 1, renewal: ["autoRenewStatus": 0]),
            .init(transactions: AppleImportStore.subscription("1000001300", periods: 3, lastExpires: now - .day, user: users[1]), status: 4, renewal: ["autoRenewStatus": 1, "gracePeriodExpiresDate": now + 3 * .day]),
            .init(transactions: AppleImportStore.oneTime("1000001400", purchased: now - 50 * .day, user: users[2]), status: nil),
        ])
        let path = try harness.file("apple.txt", ["1000001200", "1000001300", "1000001400"])
        #expect(try await harness.run(["--apple-transactions", path]).status == 0)
        let trails = try users.map { try harness.history($0).count }
        let before = try ["1000001200", "1000001300", "1000001400"].map { try harness.membership(original: $0) }

        let same = try await harness.run(["--apple-transactions", path])
        #expect(same.status == 0)
        #expect(same.output.contains("imported 0, unchanged 0, skipped 0, failed 0"), "\(same.output)")
        #expect(same.output.contains("3 finished by an earlier run of this job"), "\(same.output)")

        // Another job: every purchase asked again, and nothing written.
        let other = try await harness.run(["--apple-transactions", path, "--job", "again"])
        #expect(other.status == 0, "\(other.output)")
        #expect(other.output.contains("imported 0, unchanged 3, skipped 0, failed 0"), "\(other.output)")
        #expect(try users.map { try harness.history($0).count } == trails)
        #expect(try ["1000001200", "1000001300", "1000001400"].map { try harness.membership(original: $0) } == before)
        #expect(try harness.membershipCount() == 3)
    }
}
