import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `entitled-stores import --revenuecat`: a real `entitled`, a real `entitled-stores import` process, a
/// gzip export as RevenueCat delivers it.
// One test at a time: each runs entitled, entitled-stores and stand-ins, and the suites' tests all at once
// starved the rest of the full run (timing tests elsewhere ran out of time).
@Suite(.serialized) struct RevenueCatImportTests {
    let entitled: RunningEntitled
    let client: EntitledConnection
    let directory: TemporaryDirectory

    init() throws {
        entitled = try RunningEntitled()
        client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port))
        directory = try TemporaryDirectory()
    }

    static let header = RevenueCatExportTests.header

    func export(_ lines: [String], name: String = "transactions.csv") throws -> String {
        let path = directory.path + "/" + name
        try ([Self.header] + lines).map { $0 + "\n" }.joined().write(toFile: path, atomically: true, encoding: .utf8)
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-f", path]
        try gzip.run()
        gzip.waitUntilExit()
        return path + ".gz"
    }

    /// Every membership the server holds (`stats`).
    func memberships() throws -> Int {
        try client.send(EntitledRequest(op: "stats")).body["store"]?["memberships"]?.intValue ?? -1
    }

    /// Runs an import on a thread of its own: the test waits without holding a thread of the cooperative pool.
    func runImport(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let command = ["import", "--entitled", "127.0.0.1:\(entitled.port)", "--state-dir", directory.path + "/state"] + arguments
        return try await ImportHarness.onThread { try ServerProcess.runToCompletion("entitled-stores", command) }
    }

    /// A subscriber of two years: a trial, then monthly renewals, the last one cancelled, still paid for.
    static func twoYears(user: String = "user_1", original: String = "1000") -> [String] {
        var lines = ["$RCAnonymousID:aa;\(user);GB;pro_monthly;2025-01-01 10:00:00;2025-01-08 10:00:00;app_store;true;true;false;\(original);\(original);;;;1;PURCHASED;;"]
        for month in 1...23 {
            let start = String(format: "%04d-%02d-08 10:00:00", 2025 + (month - 1) / 12, (month - 1) % 12 + 1)
            let end = String(format: "%04d-%02d-08 10:00:00", 2025 + month / 12, month % 12 + 1)
            let unsubscribed = month == 23 ? "2026-11-20 09:00:00" : ""
            lines.append("$RCAnonymousID:aa;\(user);GB;pro_monthly;\(start);\(end);app_store;true;false;false;\(Int(original)! + month);\(original);;\(unsubscribed);;\(month + 1);PURCHASED;;")
        }
        return lines
    }

    @Test func aSubscriberOfTwoYearsIsImportedWithItsHistoryAndAnswersAsOfThePast() async throws {
        let file = try export(Self.twoYears())
        let run = try await runImport(["--revenuecat", file])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("imported 1, unchanged 0, skipped 0, failed 0"), "\(run.output)")
        let membership = try #require(try client.send(.memberships(user: "user_1")).memberships?.first)
        #expect(membership.createdAt == "2025-01-01T10:00:00Z")
        #expect(membership.expiresAt == "2026-12-08T10:00:00Z")
        #expect(membership.renewsCount == 23)
        #expect(membership.willRenew == false)
        #expect(membership.unsubscribeDetectedAt == "2026-11-20T09:00:00Z")
        #expect(membership.source == "app_store")
        #expect(membership.transactions.count == 24)
        #expect(membership.transactions.first?.type == "trial_started")
        // A year ago it was active; before its purchase it did not exist.
        #expect(try client.send(.check(user: "user_1", product: "pro_monthly", at: "2025-12-01T00:00:00Z")).body["active"]?.boolValue == true)
        #expect(try client.send(.check(user: "user_1", product: "pro_monthly", at: "2024-12-01T00:00:00Z")).body["active"]?.boolValue == false)
        let history = try #require(try client.send(.history(user: "user_1")).history)
        #expect(history.last?.action == "grant")
        #expect(history.filter { $0.action == "renewal" }.count == 23)
        #expect(history.allSatisfy { $0.reason == "import" })
    }

    @Test func runningTheSameImportAgainChangesNothing() async throws {
        let file = try export(Self.twoYears() + Self.twoYears(user: "user_2", original: "5000"))
        #expect(try await runImport(["--revenuecat", file]).status == 0)
        let trail = try client.send(.history(user: "user_2")).history?.count
        // The same job: the journal skips everything.
        let again = try await runImport(["--revenuecat", file])
        #expect(again.output.contains("2 finished by an earlier run of this job"), "\(again.output)")
        // Another job over the same file: asked again, and every write is a duplicate.
        let other = try await runImport(["--revenuecat", file, "--job", "second"])
        #expect(other.status == 0)
        #expect(other.output.contains("imported 0, unchanged 2"), "\(other.output)")
        #expect(try client.send(.history(user: "user_2")).history?.count == trail)
        #expect(try memberships() == 2)
        #expect(try client.send(.memberships(user: "user_2")).memberships?.count == 1)
    }

    @Test func theReportHasALinePerSubscriptionAndSaysWhatTheExportCouldNotGive() async throws {
        let file = try export([
            "$RCAnonymousID:zz;$RCAnonymousID:zz;;lifetime;2024-03-01 00:00:00;;play_store;false;false;false;GPA.1;GPA.1;;;;1;;;",
            "u9;u9;;pro;2024-03-01 00:00:00;2024-04-01 00:00:00;app_store;true;false;false;77;77;2024-03-05 00:00:00;;;1;;;",
            "u9;u9;;pro;not a time;;app_store;true;false;false;78;77;;;;2;;;",
        ])
        let run = try await runImport(["--revenuecat", file, "--report", directory.path + "/report.jsonl"])
        #expect(run.status == 3, "one unreadable row is a failure: \(run.output)")
        let lines = try String(contentsOfFile: directory.path + "/report.jsonl", encoding: .utf8).split(separator: "\n")
        let reports = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(reports.count == 3)
        let google = try #require(reports.first { $0["key"] as? String == "play_store:GPA.1" })
        #expect(google["status"] as? String == "imported")
        #expect((google["notes"] as? [String])?.contains("granted to a RevenueCat anonymous id") == true)
        let refunded = try #require(reports.first { $0["key"] as? String == "app_store:77" })
        #expect(refunded["status"] as? String == "imported")
        #expect(try client.send(.memberships(user: "u9")).memberships?.first?.status == "revoked")
        #expect(reports.contains { ($0["reason"] as? String)?.hasPrefix("unreadable_row: start_time") == true })
        #expect(run.output.contains("failed unreadable_row: 1"))
    }

    @Test func anImportKilledHalfwayFinishesWhenRunAgainWithEverySubscriptionOnce() async throws {
        var lines: [String] = []
        for index in 0..<2000 {
            lines.append("u\(index);u\(index);;pro;2025-06-01 00:00:00;2099-07-01 00:00:00;stripe;true;false;false;in_\(index);sub_\(index);;;;1;;;")
        }
        let file = try export(lines)
        let first = ServerProcess(
            arguments: ["import", "--entitled", "127.0.0.1:\(entitled.port)", "--state-dir", directory.path + "/state", "--revenuecat", file, "--concurrency", "1"],
            workingDirectory: directory.path, executable: "entitled-stores"
        )
        try first.start()
        // Killed once some hundreds are in: the journal has most of them (it writes 64 lines at a time), not all.
        // Watched from a thread of its own: a task of the test pool may resume seconds late in a full run.
        let test = UncheckedBox(self)
        try await ImportHarness.onThread {
            let deadline = Date().addingTimeInterval(30)
            while try test.value.memberships() < 300, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            _ = first.stop(with: SIGKILL)
        }
        let atKill = try memberships()
        #expect(atKill >= 300 && atKill < 2000, "killed halfway, not before or after: \(atKill)")
        let second = try await runImport(["--revenuecat", file])
        #expect(second.status == 0, "\(second.output)")
        #expect(second.output.contains("finished by an earlier run of this job"), "\(second.output)")
        for index in stride(from: 0, to: 2000, by: 97) {
            #expect(try client.send(.memberships(user: "u\(index)")).memberships?.count == 1)
        }
        var count = 0
        var after: String?
        repeat {
            let page = try client.send(.memberships(originalTransactionId: "sub_0"))
            count += page.memberships?.count ?? 0
            after = page.next
        } while after != nil
        #expect(count == 1)
        #expect(try memberships() == 2000, "one grant each, none twice")
    }
}
