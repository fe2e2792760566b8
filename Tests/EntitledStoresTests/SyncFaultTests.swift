import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Reconciliation and backfill when a store or `entitled` fails in the middle of a run: what the client
/// retries (500s, a request left unanswered) is done once; what it cannot (a 429 asking for longer than it
/// waits, no answer to any try, `entitled` gone) is reported, exit status 3, without a wrong write; and a
/// second run ends with every membership right.
// One test at a time: each runs entitled, entitled-stores and stand-ins, and the suites' tests all at once
// starved the rest of the full run (timing tests elsewhere ran out of time).
@Suite(.serialized) struct SyncFaultTests {
    static let day: Int64 = 86_400

    /// `count` Stripe memberships granted as the receiver grants them, each renewed at Stripe since.
    static func renewedStripeMemberships(_ count: Int, _ sync: StoreSyncHarness) throws {
        let now = StripeFixtures.now
        var subscriptions: [[String: Any]] = []
        for index in 0..<count {
            _ = try sync.client.send(
                .grant(
                    user: "f\(index)", product: "prod_pro", source: "stripe", expiresAt: ProtocolTime.string(milliseconds: (now + day) * 1000),
                    willRenew: true, environment: "sandbox", transactionId: "in_f\(index)_1", originalTransactionId: "sub_f\(index)"
                )
            )
            subscriptions.append(StoreSyncHarness.stripeSubscription("sub_f\(index)", user: "f\(index)", periodEnd: now + 31 * day, invoice: "in_f\(index)_2"))
        }
        try sync.setStripe(all: subscriptions)
    }

    /// Each membership's renewals: 0 (not corrected yet) or 1 (corrected once), never more.
    static func renewals(_ count: Int, _ sync: StoreSyncHarness) throws -> [Int] {
        try (0..<count).map { try sync.membership(original: "sub_f\($0)").renewsCount }
    }

    @Test func aStore429InTheMiddleFailsOneMembershipAndTheNextRunCorrectsIt() async throws {
        let sync = try StoreSyncHarness([.stripe])
        try Self.renewedStripeMemberships(5, sync)
        // The third call: a 429 asking for five minutes, longer than a run waits for one call.
        try sync.stripe?.set(["fail_next": ["status": 429, "count": 1, "after": 2, "retry_after": "300"]])
        let run = try await sync.run("reconcile", ["--concurrency", "1"])
        #expect(run.status == 3, "\(run.output)")
        #expect(run.output.contains("stripe: checked 5, corrected 4, failed 1 (renewal 4)"), "\(run.output)")
        #expect(run.output.contains("rate_limited"), "\(run.output)")
        #expect(try Self.renewals(5, sync).sorted() == [0, 1, 1, 1, 1])
        let again = try await sync.run("reconcile", ["--concurrency", "1"])
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("stripe: checked 5, corrected 1, failed 0 (renewal 1)"), "\(again.output)")
        #expect(try Self.renewals(5, sync) == [1, 1, 1, 1, 1])
    }

    @Test func appStore500sInTheMiddleAreTriedAgainAndWriteOnce() async throws {
        let sync = try StoreSyncHarness([.apple])
        let stores = try sync.receiver()
        let now = StoreSyncHarness.now, day = StoreSyncHarness.day
        for number in 1...3 {
            let original = "\(5_000_000_000 + number)"
            let first = StoreSyncHarness.appleTransaction(
                original, original: original, purchased: now - 35 * day, expires: now - 5 * day, token: StoreSyncHarness.appleUser(40 + number)
            )
            let body = sync.appleNotification("SUBSCRIBED", uuid: "f-\(number)", signedDate: now - 35 * day, transaction: first, renewal: ["autoRenewStatus": 1])
            #expect(try stores.post("/apple", body: body).body == "applied\n")
            let second = StoreSyncHarness.appleTransaction(
                "\(6_000_000_000 + number)", original: original, purchased: now - 5 * day, expires: now + 25 * day,
                token: StoreSyncHarness.appleUser(40 + number)
            )
            try sync.setApple(original: original, transactions: [first, second], status: 1)
        }
        try sync.apple?.set(["fail_next": ["status": 500, "count": 2, "after": 2]])
        let run = try await sync.run("reconcile", ["--concurrency", "1"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("app_store: checked 3, corrected 3, failed 0 (renewal 3)"), "\(run.output)")
        #expect(try sync.apple?.traffic().requests == 8, "six calls and two tried again")
        for number in 1...3 {
            #expect(try sync.membership(original: "\(5_000_000_000 + number)").renewsCount == 1)
            #expect(try sync.history(StoreSyncHarness.appleUser(40 + number)).filter { $0.action == "renewal" }.count == 1)
        }
    }

    @Test func googleAnsweringNothingToEveryTryFailsOneMembershipAndTheNextRunCorrectsIt() async throws {
        let sync = try StoreSyncHarness([.google])
        let now = StoreSyncHarness.now, day = StoreSyncHarness.day
        for index in 0..<3 {
            _ = try sync.client.send(
                .grant(
                    user: "g\(index)", product: "premium_monthly", source: "play_store", expiresAt: ProtocolTime.string(milliseconds: now + day),
                    willRenew: true, environment: "sandbox", transactionId: "GPA.4000-0000-0000-0000\(index)", originalTransactionId: "tok-f\(index)"
                )
            )
            try sync.setGoogle(
                subscription: "tok-f\(index)",
                StoreSyncHarness.googleSubscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.4000-0000-0000-0000\(index)..0", expiry: now + 31 * day, user: "g\(index)")
            )
        }
        // The second membership's every try (a run tries a call 8 times) read and left unanswered.
        try sync.google?.set(["fail_next": ["status": "hang", "count": 8, "after": 1, "hang_seconds": 0.2]])
        let run = try await sync.run("reconcile", ["--concurrency", "1"])
        #expect(run.status == 3, "\(run.output)")
        #expect(run.output.contains("play_store: checked 3, corrected 2, failed 1 (renewal 2)"), "\(run.output)")
        #expect(run.output.contains("did not answer"), "\(run.output)")
        let renewals = try (0..<3).map { try sync.membership(original: "tok-f\($0)").renewsCount }
        #expect(renewals == [1, 0, 1])
        let again = try await sync.run("reconcile")
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("play_store: checked 3, corrected 1, failed 0 (renewal 1)"), "\(again.output)")
        #expect(try (0..<3).map { try sync.membership(original: "tok-f\($0)").renewsCount } == [1, 1, 1])
    }

    @Test func entitledGoneInTheMiddleFailsTheRestAndTheNextRunFinishes() async throws {
        let sync = try StoreSyncHarness([.stripe])
        let count = 8
        try Self.renewedStripeMemberships(count, sync)
        // Stripe answers slowly enough for entitled to stop in the middle of the run.
        try sync.stripe?.set(["delay": 0.3])
        let process = ServerProcess(
            arguments: ["reconcile", "--entitled", "127.0.0.1:\(sync.entitled.port)", "--state-dir", sync.stateDirectory, "--concurrency", "1"]
                + sync.storeOptions,
            workingDirectory: sync.files.path, executable: "entitled-stores"
        )
        try process.start()
        // Watched from a thread of its own: a task of the test pool may resume seconds late in a full run.
        let harness = UncheckedBox(sync)
        try await ImportHarness.onThread {
            let deadline = Date().addingTimeInterval(60)
            while try harness.value.stripe?.traffic().requests ?? 0 < 3, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            _ = harness.value.entitled.stop()
            let finished = Date().addingTimeInterval(120)
            while process.process.isRunning, Date() < finished { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(!process.process.isRunning, "reconcile did not end with entitled gone")
        let status = process.stop(with: SIGKILL)
        let output = process.standardOutputText() + process.standardErrorText()
        #expect(status == 3, "\(output)")
        #expect(output.contains("entitled_unavailable"), "\(output)")

        try sync.entitled.restart()
        sync.reconnect()
        let renewals = try Self.renewals(count, sync)
        #expect(renewals.allSatisfy { $0 <= 1 } && renewals.contains(1) && renewals.contains(0), "\(renewals)")
        try sync.stripe?.set(["delay": 0])
        let again = try await sync.run("reconcile")
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("stripe: checked \(count), corrected \(renewals.filter { $0 == 0 }.count), failed 0"), "\(again.output)")
        #expect(try Self.renewals(count, sync) == Array(repeating: 1, count: count))
    }

    @Test func entitledGoneInTheMiddleOfABackfillFailsTheRestAndTheNextOneFinishes() async throws {
        let sync = try StoreSyncHarness([.apple])
        let now = StoreSyncHarness.now, day = StoreSyncHarness.day
        let count = 6
        for number in 1...count {
            let original = "\(7_100_000_000 + number)"
            let transaction = StoreSyncHarness.appleTransaction(
                original, original: original, purchased: now - Int64(7 - number) * day, expires: now + 20 * day, token: StoreSyncHarness.appleUser(60 + number)
            )
            let body = sync.appleNotification("SUBSCRIBED", uuid: "e-\(number)", signedDate: now - Int64(7 - number) * day, transaction: transaction)
            try sync.addAppleHistory(body, date: now - Int64(7 - number) * day, original: original)
        }
        // A page a notification, answered slowly enough for entitled to stop in the middle.
        try sync.apple?.set(["page_size": 1, "delay": 0.3])
        let since = StoreSyncHarness.since(daysAgo: 8)
        let process = ServerProcess(
            arguments: ["backfill", "--entitled", "127.0.0.1:\(sync.entitled.port)", "--state-dir", sync.stateDirectory, "--since", since] + sync.storeOptions,
            workingDirectory: sync.files.path, executable: "entitled-stores"
        )
        try process.start()
        // Watched from a thread of its own: a task of the test pool may resume seconds late in a full run.
        let harness = UncheckedBox(sync)
        try await ImportHarness.onThread {
            let deadline = Date().addingTimeInterval(60)
            while try harness.value.apple?.traffic().requests ?? 0 < 3, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            _ = harness.value.entitled.stop()
            let finished = Date().addingTimeInterval(120)
            while process.process.isRunning, Date() < finished { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(!process.process.isRunning, "backfill did not end with entitled gone")
        let status = process.stop(with: SIGKILL)
        let output = process.standardOutputText() + process.standardErrorText()
        #expect(status == 3, "\(output)")

        try sync.entitled.restart()
        sync.reconnect()
        let granted = try (1...count).map { try sync.memberships(StoreSyncHarness.appleUser(60 + $0)).count }
        #expect(granted.allSatisfy { $0 <= 1 } && granted.contains(1) && granted.contains(0), "\(granted)")
        #expect(output.contains("apple: applied \(granted.filter { $0 == 1 }.count), duplicate 0, ignored 0, unmatched 0, failed \(granted.filter { $0 == 0 }.count)"), "\(output)")
        try sync.apple?.set(["delay": 0])
        let again = try await sync.run("backfill", ["--since", since])
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("apple: applied \(granted.filter { $0 == 0 }.count), duplicate \(granted.filter { $0 == 1 }.count),"), "\(again.output)")
        #expect(try (1...count).map { try sync.memberships(StoreSyncHarness.appleUser(60 + $0)).count } == Array(repeating: 1, count: count))
    }

    @Test func aBackfillStoppedInTheMiddleOfTheHistoryIsFinishedByTheNextOne() async throws {
        let sync = try StoreSyncHarness([.apple])
        let now = StoreSyncHarness.now, day = StoreSyncHarness.day
        for number in 1...5 {
            let original = "\(7_000_000_000 + number)"
            let transaction = StoreSyncHarness.appleTransaction(
                original, original: original, purchased: now - Int64(6 - number) * day, expires: now + 20 * day, token: StoreSyncHarness.appleUser(50 + number)
            )
            let body = sync.appleNotification("SUBSCRIBED", uuid: "h-\(number)", signedDate: now - Int64(6 - number) * day, transaction: transaction)
            try sync.addAppleHistory(body, date: now - Int64(6 - number) * day, original: original)
        }
        // Two a page; the second page answered 429 with a wait of five minutes.
        try sync.apple?.set(["page_size": 2, "fail_next": ["status": 429, "count": 1, "after": 1, "retry_after_ms": 300_000]])
        let since = StoreSyncHarness.since(daysAgo: 7)
        let run = try await sync.run("backfill", ["--since", since])
        #expect(run.status == 3, "\(run.output)")
        #expect(run.output.contains("apple: applied 2, duplicate 0, ignored 0, unmatched 0, failed 0; stopped:"), "\(run.output)")
        #expect(try (1...5).map { try sync.memberships(StoreSyncHarness.appleUser(50 + $0)).count } == [1, 1, 0, 0, 0])
        let again = try await sync.run("backfill", ["--since", since])
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("apple: applied 3, duplicate 2, ignored 0, unmatched 0, failed 0"), "\(again.output)")
        #expect(try (1...5).map { try sync.memberships(StoreSyncHarness.appleUser(50 + $0)).count } == [1, 1, 1, 1, 1])
    }
}
