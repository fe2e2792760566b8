import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// The reconciliation `serve` runs on its schedule: once at start when the state directory has no last
/// run, then not again before the interval, across restarts; its metrics on `GET /metrics` and a log line
/// per corrected membership; never with an interval of 0.
// One test at a time: each runs entitled, entitled-stores and stand-ins, and the suites' tests all at once
// starved the rest of the full run (timing tests elsewhere ran out of time).
@Suite(.serialized) struct ScheduledReconciliationTests {
    let sync: StoreSyncHarness
    static let now = StripeFixtures.now

    init() throws {
        sync = try StoreSyncHarness([.stripe])
        // A membership whose renewal was missed, and one Stripe does not know.
        for id in ["sub_sched", "sub_unknown"] {
            _ = try sync.client.send(
                .grant(
                    user: "u-\(id)", product: "prod_pro", source: "stripe", expiresAt: ProtocolTime.string(milliseconds: (Self.now + 86_400) * 1000),
                    willRenew: true, environment: "sandbox", transactionId: "in_\(id)_1", originalTransactionId: id
                )
            )
        }
        try sync.setStripe(StoreSyncHarness.stripeSubscription("sub_sched", user: "u-sub_sched", periodEnd: Self.now + 31 * 86_400, invoice: "in_sub_sched_2"))
    }

    /// Polls every 0.1 s for up to `seconds`, on a thread of its own: the test waits without holding one of
    /// the cooperative pool's threads, which other suites' asynchronous tests need meanwhile.
    func eventually(_ seconds: Double, _ condition: @escaping () throws -> Bool) async throws -> Bool {
        try await ImportHarness.onThread {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if try condition() { return true }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return try condition()
        }
    }

    /// The value of the metric line that starts with `name` and holds every one of `labels`.
    static func value(_ metrics: String, _ name: String, _ labels: [String] = []) -> Double? {
        metrics.split(separator: "\n").first { line in
            line.hasPrefix(name) && labels.allSatisfy { line.contains($0) }
        }.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
    }

    @Test func aFreshStateDirectoryRunsOnceAtStartAndARestartDoesNotRunAgain() async throws {
        let lastRun = sync.stateDirectory + "/reconciliation.last"
        let started = Date().timeIntervalSince1970
        let stores = try sync.receiver(["--state-dir", sync.stateDirectory, "--log-level", "notice"], reconcileIntervalHours: 1)
        let ran = try await eventually(60) { Self.value(try stores.get("/metrics").body, "entitled_stores_reconciliation_runs_total") == 1 }
        #expect(ran, "no reconciliation ran at start")
        let metrics = try stores.get("/metrics").body
        #expect(Self.value(metrics, "entitled_stores_reconciliation_checked_total", [#"store="stripe""#]) == 2, "\(metrics)")
        #expect(Self.value(metrics, "entitled_stores_reconciliation_drift_total", [#"store="stripe""#, #"kind="renewal""#]) == 1, "\(metrics)")
        #expect(Self.value(metrics, "entitled_stores_reconciliation_failed_total", [#"store="stripe""#]) == 1, "\(metrics)")
        let finished = try #require(Self.value(metrics, "entitled_stores_reconciliation_last_run_timestamp_seconds"), "\(metrics)")
        // The run's own end, between this test's start and now (whatever the machine's load made of the wait).
        #expect(finished >= started.rounded(.down) && finished <= Date().timeIntervalSince1970 + 1, "\(started) \(finished)")
        #expect(try await eventually(10) { FileManager.default.fileExists(atPath: lastRun) }, "reconciliation.last was not written")
        let written = try String(contentsOfFile: lastRun, encoding: .utf8)
        #expect(try sync.membership(original: "sub_sched").renewsCount == 1)
        let requests = try #require(try sync.stripe?.traffic().requests)
        #expect(requests == 2)
        let log = stores.stopAndReadLog()
        let membership = try sync.membership(original: "sub_sched")
        #expect(log.contains("reconciled stripe membership \(membership.id) of u-sub_sched: renewal"), "\(log)")
        #expect(log.contains("could not reconcile stripe membership"), "\(log)")

        // Restarted within the hour: the last run is recent, so none at start.
        try stores.restart()
        try await Task.sleep(for: .seconds(3))
        #expect(Self.value(try stores.get("/metrics").body, "entitled_stores_reconciliation_runs_total") == nil)
        #expect(try sync.stripe?.traffic().requests == requests)
        #expect(try String(contentsOfFile: lastRun, encoding: .utf8) == written)
    }

    /// A run cut short by a shutdown (a deploy's SIGTERM) is not the interval's run: the next start runs
    /// again rather than waiting a whole interval with memberships left unchecked.
    @Test func aRunCutShortByAShutdownIsNotRecordedAsDone() async throws {
        // Stripe answers in 20 s: the run is still going when the receiver is stopped, however late this
        // test gets its turn on a machine busy with the whole suite.
        try sync.stripe?.set(["delay": 20])
        let stores = try sync.receiver(["--state-dir", sync.stateDirectory], reconcileIntervalHours: 1)
        #expect(try await eventually(30) { try sync.stripe?.traffic().requests ?? 0 >= 1 }, "the run did not start")
        _ = stores.stopAndReadLog()
        #expect(!FileManager.default.fileExists(atPath: sync.stateDirectory + "/reconciliation.last"), "the interrupted run was recorded as the last run")
        try sync.stripe?.set(["delay": 0])
        try stores.restart()
        let ran = try await eventually(60) { Self.value(try stores.get("/metrics").body, "entitled_stores_reconciliation_runs_total") == 1 }
        #expect(ran, "no reconciliation ran at the next start")
        #expect(try sync.membership(original: "sub_sched").renewsCount == 1)
    }

    @Test func anIntervalOfZeroNeverReconciles() async throws {
        let stores = try sync.receiver(["--state-dir", sync.stateDirectory], reconcileIntervalHours: 0)
        try await Task.sleep(for: .seconds(3))
        #expect(try stores.get("/health").status == 200)
        #expect(Self.value(try stores.get("/metrics").body, "entitled_stores_reconciliation_runs_total") == nil)
        #expect(try sync.stripe?.traffic().requests == 0)
        #expect(!FileManager.default.fileExists(atPath: sync.stateDirectory + "/reconciliation.last"))
        #expect(try sync.membership(original: "sub_sched").renewsCount == 0)
    }
}
