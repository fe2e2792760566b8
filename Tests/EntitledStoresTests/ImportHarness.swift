import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// A real `entitled` and the real `entitled-stores import` process run against it, as an operator runs
/// them: the import suites (App Store, Google Play, Stripe, faults, overlap) give it the stand-ins'
/// addresses and key files (`storeArguments`) and read back what `entitled` holds.
final class ImportHarness {
    let entitled: RunningEntitled
    let client: EntitledConnection
    let directory: TemporaryDirectory
    /// The store options of every run: the stand-ins' URLs, the key files.
    var storeArguments: [String] = []
    private var runs = 0

    init() throws {
        entitled = try RunningEntitled()
        client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port))
        directory = try TemporaryDirectory()
    }

    /// What one run of `entitled-stores import` did: its exit status, its output (standard output and
    /// standard error together, as a person sees them), and its report's lines.
    struct Run {
        var status: Int32
        var output: String
        var report: [[String: Any]]

        /// The report's line for `key`.
        func line(_ key: String) -> [String: Any]? { report.last { $0["key"] as? String == key } }
        func status(_ key: String) -> String? { line(key)?["status"] as? String }
        func reason(_ key: String) -> String { line(key)?["reason"] as? String ?? "" }
    }

    /// The arguments of an import with `arguments` and a report file of its own.
    func arguments(_ arguments: [String], report: String) -> [String] {
        ["import", "--entitled", "127.0.0.1:\(entitled.port)", "--state-dir", directory.path + "/state", "--report", report, "--log-level", "warning"]
            + storeArguments + arguments
    }

    /// Runs an import to its end. Each run has a report file of its own, so that its lines are its own;
    /// the journal is the job's (the same inputs resume the same job).
    func run(_ arguments: [String]) async throws -> Run {
        try await start(arguments).finish()
    }

    /// Starts an import without waiting for it (to act while it runs, to kill it).
    func start(_ arguments: [String]) throws -> Started {
        runs += 1
        return try Started(arguments: self.arguments(arguments, report: directory.path + "/report-\(runs).jsonl"), in: directory.path, number: runs)
    }

    /// An import process running. Its output goes to a file, so that nothing waits on a full pipe, and its
    /// end is awaited by polling: Swift Testing runs the tests on a pool of as many threads as the machine
    /// has cores, and a test blocking one for the minute a faulty run lasts stops the other suites' tests.
    final class Started {
        let process = Process()
        let outputPath: String
        let reportPath: String

        init(arguments: [String], in directory: String, number: Int) throws {
            outputPath = directory + "/output-\(number).txt"
            reportPath = directory + "/report-\(number).jsonl"
            _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
            let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
            process.executableURL = ServerProcess.builtExecutable(named: "entitled-stores")
            process.arguments = arguments
            // As ServerProcess: a developer's ENTITLED_* variables must not change what a test runs.
            process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ENTITLED_") }
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            process.standardOutput = output
            process.standardError = output
            try process.run()
            try output.close()
        }

        /// Waits for the import's end: its status, its output and its report.
        func finish() async throws -> Run {
            while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
            let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            return Run(status: process.terminationStatus, output: output, report: ImportHarness.report(reportPath))
        }

        /// Kills it as a crash would (SIGKILL), and waits for it to be gone (within `onThread`).
        func kill() {
            Foundation.kill(process.processIdentifier, SIGKILL)
            while process.isRunning { Thread.sleep(forTimeInterval: 0.01) }
        }

        deinit {
            if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        }
    }

    static func report(_ path: String) -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Writes `lines` to a file of the test's directory; returns its path.
    func file(_ name: String, _ lines: [String]) throws -> String {
        let path = directory.path + "/" + name
        try lines.map { $0 + "\n" }.joined().write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Every membership holding the subscription started by `original`, all pages: more than one would
    /// be a purchase imported twice.
    func memberships(original: String) throws -> [MembershipInfo] {
        try client.allMemberships(originalTransactionId: original)
    }

    /// The one membership of `original`; fails the test when there is none or more than one.
    func membership(original: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> MembershipInfo {
        let found = try memberships(original: original)
        #expect(found.count == 1, "one membership of \(original), not \(found.count)", sourceLocation: sourceLocation)
        return try #require(found.first, sourceLocation: sourceLocation)
    }

    func history(_ user: String) throws -> [HistoryEntry] {
        try client.allHistory(user: user)
    }

    /// Whether `user` had access to `product` at `milliseconds` (since the epoch).
    func active(_ user: String, _ product: String, at milliseconds: Int64) throws -> Bool {
        try client.send(.check(user: user, product: product, at: ProtocolTime.string(milliseconds: milliseconds))).body["active"]?.boolValue == true
    }

    func active(_ user: String, _ product: String) throws -> Bool {
        try client.send(.check(user: user, product: product)).body["active"]?.boolValue == true
    }

    /// Every membership `entitled` holds.
    func membershipCount() throws -> Int {
        try client.send(EntitledRequest(op: "stats")).body["store"]?["memberships"]?.intValue ?? -1
    }

    /// Waits until `condition` holds (polled every 20 ms) or `seconds` pass; returns whether it held. It
    /// blocks its thread: call it within `onThread`.
    @discardableResult
    static func wait(seconds: Double = 60, until condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return try condition()
    }

    /// Runs `body` on a thread of its own and returns what it returned. What a test does while an import
    /// runs (waiting for it to be midway, then failing the store, killing a process) must happen then,
    /// not when a thread of the test pool is free: with as many as the machine has cores, other suites'
    /// tests that block theirs can hold the pool for half a minute. The test waits for it without holding
    /// one. Expectations belong after it, in the test's own task.
    static func onThread<T>(_ body: @escaping () throws -> T) async throws -> T {
        let work = UncheckedBox(body)
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let resume = UncheckedBox(continuation)
            Thread.detachNewThread { resume.value.resume(with: Result { try work.value() }) }
        }
    }

    /// The cursor lines of the journals under the state directory: the pages of a listing finished.
    func journalCursors() -> [String] {
        let imports = directory.path + "/state/imports"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: imports)) ?? []
        return names.filter { $0.hasSuffix(".journal") }.flatMap { name in
            ((try? String(contentsOfFile: imports + "/" + name, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.hasPrefix("cursor\t") }.map(String.init)
        }
    }
}

/// A value handed to another thread by a test that knows only one thread uses it at a time.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension Int64 {
    /// A day in milliseconds.
    static let day: Int64 = 86_400_000
}
