import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// An import meeting faults midway: a store answering 429 (with its `Retry-After`), 500 beyond the client's
/// retries, no answer, a body that stalls; `entitled` killed and back, or down for longer than the
/// importer's retries; the importer itself killed with SIGKILL. Each ends, in the run or the next one, with
/// every subscription right and none imported twice (`memberships originalTransactionId` lists one).
// One test at a time: each runs entitled, entitled-stores and stand-ins, and the suites' tests all at once
// starved the rest of the full run (timing tests elsewhere ran out of time).
@Suite(.serialized) struct ImportFaultTests {
    let harness: ImportHarness

    init() throws {
        harness = try ImportHarness()
    }

    static var milliseconds: Int64 { AppleFixtures.nowMilliseconds }

    /// `count` App Store subscriptions of `periods` periods each, renewing, their users their tokens.
    static func appleSubscriptions(_ count: Int, periods: Int, first: Int64 = 3_000_000_000) -> [[[String: Any]]] {
        let now = milliseconds
        return (0..<count).map { index in
            AppleImportStore.subscription(
                String(first + Int64(index) * 100), periods: periods, lastExpires: now + Int64(index + 1) * .day,
                user: String(format: "5d0c6a4e-3b1f-4c2a-9e7d-%012d", index)
            )
        }
    }

    /// Every subscription of `subscriptions` is in `entitled` once, with every transaction, renewing to
    /// its last period's end.
    func expectRight(_ subscriptions: [[[String: Any]]], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for transactions in subscriptions {
            let original = transactions[0]["originalTransactionId"] as? String ?? ""
            let found = try harness.memberships(original: original)
            #expect(found.count == 1, "\(original): \(found.count) memberships", sourceLocation: sourceLocation)
            guard let membership = found.first else { continue }
            #expect(membership.renewsCount == transactions.count - 1, "\(original)", sourceLocation: sourceLocation)
            #expect(membership.transactions.map(\.id) == transactions.map { $0["transactionId"] as? String ?? "" }, "\(original)", sourceLocation: sourceLocation)
            #expect(
                membership.expiresAt.flatMap(ProtocolTime.milliseconds) == transactions.last?["expiresDate"] as? Int64, "\(original)",
                sourceLocation: sourceLocation)
            #expect(membership.willRenew && membership.isActive, "\(original)", sourceLocation: sourceLocation)
        }
        #expect(try harness.membershipCount() == subscriptions.count, sourceLocation: sourceLocation)
    }

    @Test func theAppStoreAnswering429MidwayIsWaitedOutAsItsRetryAfterSays() async throws {
        let store = try AppleImportStore()
        harness.storeArguments = store.arguments
        let subscriptions = Self.appleSubscriptions(12, periods: 4)
        try store.serve(subscriptions.map { .init(transactions: $0, status: 1) })
        // Each answer takes 0.2 s: the run lasts seconds, and the 429s come while it is under way.
        try store.production.set(["page_size": 2, "delay": 0.2])
        let file = try harness.file("apple.txt", subscriptions.map { $0[0]["transactionId"] as? String ?? "" })
        let process = try harness.start(["--apple-transactions", file, "--concurrency", "2"])
        let midway = try await ImportHarness.onThread {
            let reached = try ImportHarness.wait { try harness.membershipCount() >= 2 }
            try store.production.set(["fail_next": ["status": 429, "count": 3, "retry_after_ms": 1500]])
            return reached && process.process.isRunning
        }
        #expect(midway, "the 429s come while the import runs")
        let finished = try await process.finish()
        let (status, output) = (finished.status, finished.output)
        #expect(status == 0, "\(output)")
        #expect(output.contains("imported 12, unchanged 0, skipped 0, failed 0"), "\(output)")
        try expectRight(subscriptions)
        // Each subscription's two pages and status, and the three 429s asked again.
        #expect(try store.production.traffic().requests == 12 * 3 + 3)
    }

    @Test func aStoreFailingBeyondTheClientsRetriesIsAskedAgainWithinTheRun() async throws {
        let store = try GoogleImportStore()
        harness.storeArguments = store.arguments
        let now = Self.milliseconds
        try store.serve(subscriptions: [
            "tok-f1": GoogleImportStore.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.5000-0000-0000-00001..2", started: now - 90 * .day, expiry: now + 9 * .day, user: "f_1"),
            "tok-f2": GoogleImportStore.subscription("SUBSCRIPTION_STATE_IN_GRACE_PERIOD", order: "GPA.5000-0000-0000-00002..0", started: now - 40 * .day, expiry: now + 2 * .day, user: "f_2"),
        ])
        // Nine 500s: one purchase's eight tries (the client's patience) and then one more, the other's first.
        try store.standIn.failNext(9, with: 500)
        let run = try await harness.run(["--google-subscriptions", try harness.file("google.txt", ["tok-f1", "tok-f2"]), "--concurrency", "1"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("imported 2, unchanged 0, skipped 0, failed 0"), "\(run.output)")
        let first = try harness.membership(original: "tok-f1")
        #expect(first.renewsCount == 3)
        #expect(first.isActive && first.willRenew)
        let second = try harness.membership(original: "tok-f2")
        #expect(second.status == "past_due")
        #expect(try store.standIn.traffic().requests == 9 + 2)
    }

    @Test func aStoreThatAnswersNothingIsAskedAgain() async throws {
        let store = try GoogleImportStore()
        harness.storeArguments = store.arguments
        let now = Self.milliseconds
        let tokens = (0..<5).map { "tok-h\($0)" }
        try store.serve(
            subscriptions: Dictionary(
                uniqueKeysWithValues: tokens.enumerated().map { index, token in
                    (token, GoogleImportStore.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.6000-0000-0000-0000\(index)..\(index)", started: now - 90 * .day, expiry: now + 9 * .day, user: "h_\(index)"))
                })
        )
        // Two requests read and never answered: the connection closed after two seconds.
        try store.standIn.failNext(2, with: "hang", hangSeconds: 2)
        let run = try await harness.run(["--google-subscriptions", try harness.file("google.txt", tokens)])
        #expect(run.status == 0, "\(run.output)")
        for (index, token) in tokens.enumerated() {
            let membership = try harness.membership(original: token)
            #expect(membership.renewsCount == index + 1)
            #expect(membership.user == "h_\(index)")
        }
        #expect(try harness.membershipCount() == 5)
        // Each purchase once, and the two that got no answer once more.
        #expect(try store.standIn.traffic().requests == 5 + 2)
    }

    @Test(.timeLimit(.minutes(3))) func aBodyThatStallsIsGivenUpAfterTheTimeoutAndAskedAgain() async throws {
        let store = try StripeImportStore()
        harness.storeArguments = store.arguments
        let now = Int64(Date().timeIntervalSince1970)
        try store.serve((0..<3).map { StripeImportStore.subscription("sub_s\($0)", started: now - 60 * 86_400, periodEnd: now + 9 * 86_400, user: "st_\($0)") })
        // A head and ten bytes, then nothing for longer than the client's 30 s.
        try store.standIn.failNext(1, with: "stall", hangSeconds: 45)
        let run = try await harness.run(["--stripe-subscriptions", try harness.file("stripe.txt", ["sub_s0", "sub_s1", "sub_s2"])])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("imported 3, unchanged 0, skipped 0, failed 0"), "\(run.output)")
        for index in 0..<3 {
            #expect(try harness.membership(original: "sub_s\(index)").isActive)
        }
        #expect(try store.requests() == 4)
    }

    @Test func aListingAnswered429MidwayGoesOnWhereItWas() async throws {
        let store = try StripeImportStore()
        harness.storeArguments = store.arguments
        try store.serve(StripeImportTests.many(250, prefix: "sub_l"))
        // Each page listed in a second: the second page's request comes a second or more after the first's
        // subscriptions begin to be imported.
        try store.standIn.set(["delay": 1])
        let process = try harness.start(["--stripe-all", "--concurrency", "2"])
        // The first page under way: the next list request (the second page) is refused twice.
        let midway = try await ImportHarness.onThread {
            let reached = try ImportHarness.wait { try harness.membershipCount() >= 20 }
            try store.standIn.failNext(2, with: 429, retryAfter: "1")
            return reached && process.process.isRunning
        }
        #expect(midway, "the 429s come while the import runs")
        let finished = try await process.finish()
        let (status, output) = (finished.status, finished.output)
        #expect(status == 0, "\(output)")
        #expect(output.contains("imported 250, unchanged 0, skipped 0, failed 0"), "\(output)")
        #expect(try harness.membershipCount() == 250)
        for index in stride(from: 0, to: 250, by: 17) {
            #expect(try harness.memberships(original: "sub_l\(index)").count == 1)
        }
        // Three pages, and the two 429s.
        #expect(try store.requests() == 3 + 2)
    }

    @Test func entitledKilledMidwayAndBackIsWaitedForWithinTheRun() async throws {
        let store = try AppleImportStore()
        harness.storeArguments = store.arguments
        let subscriptions = Self.appleSubscriptions(16, periods: 3)
        try store.serve(subscriptions.map { .init(transactions: $0, status: 1) })
        try store.production.set(["delay": 0.2])
        let file = try harness.file("apple.txt", subscriptions.map { $0[0]["transactionId"] as? String ?? "" })
        let process = try harness.start(["--apple-transactions", file, "--concurrency", "2"])
        let midway = try await ImportHarness.onThread {
            let reached = try ImportHarness.wait { try harness.membershipCount() >= 4 }
            harness.entitled.kill()
            let running = process.process.isRunning
            Thread.sleep(forTimeInterval: 1)
            try harness.entitled.restart()
            return reached && running
        }
        #expect(midway, "entitled killed while the import runs")
        let finished = try await process.finish()
        let (status, output) = (finished.status, finished.output)
        #expect(status == 0, "\(output)")
        // Some writes may have reached entitled before it died, their answers lost: unchanged when tried again.
        #expect(output.contains("skipped 0, failed 0"), "\(output)")
        try expectRight(subscriptions)
    }

    @Test(.timeLimit(.minutes(3))) func entitledDownLongerThanTheRetriesFailsTheRunAndTheNextFinishesIt() async throws {
        let store = try AppleImportStore()
        harness.storeArguments = store.arguments
        let subscriptions = Self.appleSubscriptions(6, periods: 3)
        try store.serve(subscriptions.map { .init(transactions: $0, status: 1) })
        try store.production.set(["delay": 0.3])
        let file = try harness.file("apple.txt", subscriptions.map { $0[0]["transactionId"] as? String ?? "" })
        let process = try harness.start(["--apple-transactions", file, "--concurrency", "1"])
        let midway = try await ImportHarness.onThread {
            let reached = try ImportHarness.wait { try harness.membershipCount() >= 1 }
            harness.entitled.kill()
            return reached && process.process.isRunning
        }
        #expect(midway, "entitled killed while the import runs")
        // Down for the rest of the run: the importer tries again after 2, 10 and 30 s, then reports.
        let finished = try await process.finish()
        let (status, output) = (finished.status, finished.output)
        #expect(status == 3, "\(output)")
        #expect(output.contains("failed entitled_unavailable: "), "\(output)")
        #expect(output.contains("some identifiers failed"), "\(output)")
        // Standard error is no terminal: plain lines, one for each wait before the failed are tried again.
        #expect(output.split(separator: "\n").filter { $0.hasPrefix("App Store  ") && $0.contains("/6  ") }.count >= 4, "\(output)")
        for wait in [2, 10, 30] { #expect(output.contains(" to try again in \(wait)s (the store or entitled unavailable)"), "\(output)") }
        try harness.entitled.restart()
        let again = try await harness.run(["--apple-transactions", file])
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("failed 0"), "\(again.output)")
        try expectRight(subscriptions)
    }

    @Test func theImporterKilledMidwayThenRunAgainLeavesEverySubscriptionRightAndOnce() async throws {
        let store = try AppleImportStore()
        harness.storeArguments = store.arguments
        let subscriptions = Self.appleSubscriptions(24, periods: 8)
        try store.serve(subscriptions.map { .init(transactions: $0, status: 1) })
        try store.production.set(["page_size": 3, "delay": 0.1])
        let file = try harness.file("apple.txt", subscriptions.map { $0[0]["transactionId"] as? String ?? "" })
        let process = try harness.start(["--apple-transactions", file, "--concurrency", "4"])
        let atKill = try await ImportHarness.onThread { () -> Int in
            try ImportHarness.wait { try harness.membershipCount() >= 8 }
            process.kill()
            return try harness.membershipCount()
        }
        #expect(atKill >= 8 && atKill < 24, "killed midway: \(atKill)")
        let again = try await harness.run(["--apple-transactions", file])
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("finished by an earlier run of this job"), "\(again.output)")
        try expectRight(subscriptions)
    }
}
