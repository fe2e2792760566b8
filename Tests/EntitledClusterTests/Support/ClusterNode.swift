import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// One `entitled --postgres` process of a test's cluster, on a free port, with a blocking client.
/// Started and stopped by the test's own thread; its connections may be used from any thread.
final class ClusterNode: @unchecked Sendable {
    let name: String
    let url: String
    let directory: TemporaryDirectory
    private(set) var process: ServerProcess?
    private(set) var port = 0
    private let extraArguments: [String]
    private let environment: [String: String]
    private let settingsInEnvironment: Bool

    /// - Parameter environment: variables for the node's process. With `ENTITLED_`-less keys only, the
    ///   settings still go on the command line; libfaketime preloaded into the process empties Swift's
    ///   `CommandLine.arguments`, so a test that preloads it passes `settingsInEnvironment`.
    /// - Parameter settingsInEnvironment: give every `--name value` setting as `ENTITLED_NAME=value` instead.
    init(name: String, url: String, arguments: [String] = [], environment: [String: String] = [:], settingsInEnvironment: Bool = false) throws {
        self.name = name
        self.url = url
        self.extraArguments = arguments
        self.environment = environment
        self.settingsInEnvironment = settingsInEnvironment
        directory = try TemporaryDirectory()
        try start()
    }

    var arguments: [String] {
        ["--postgres", url, "--node-name", name, "--port", "0", "--snapshot-interval", "0", "--log-level", "debug"] + extraArguments
    }

    /// Starts (again) and waits for the ready line.
    func start() throws {
        var environment = self.environment
        var arguments = self.arguments
        if settingsInEnvironment {
            // `--snapshot-interval 0` as ENTITLED_SNAPSHOT_INTERVAL=0: every setting here takes a value.
            for index in stride(from: 0, to: arguments.count - 1, by: 2) {
                let name = "ENTITLED_" + arguments[index].dropFirst(2).uppercased().replacingOccurrences(of: "-", with: "_")
                environment[name] = arguments[index + 1]
            }
            arguments = []
        }
        let process = ServerProcess(arguments: arguments, workingDirectory: directory.path, environment: environment)
        self.process = process
        port = try #require(try process.startAndWaitUntilReady(), "\(name) did not start: \(process.standardErrorText().suffix(2000))")
    }

    /// SIGKILL, then waits until the process is gone from the process table's live states (a zombie
    /// counts as gone). Not `Process.waitUntilExit`: a node started later inherits the descriptor
    /// through which Foundation learns of this one's exit, and that wait would last until it exits too.
    func kill9() {
        guard let pid = process?.process.processIdentifier, pid > 0 else { return }
        kill(pid, SIGKILL)
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let state = stat.split(separator: ")").last?.split(separator: " ").first, state != "Z"
            else { return }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    func stop() {
        _ = process?.stop()
    }

    /// SIGSTOP: the process keeps its connections but does nothing, as a node whose machine hangs.
    func pause() {
        guard let pid = process?.process.processIdentifier, pid > 0 else { return }
        kill(pid, SIGSTOP)
    }

    /// SIGCONT after `pause()`.
    func resume() {
        guard let pid = process?.process.processIdentifier, pid > 0 else { return }
        kill(pid, SIGCONT)
    }

    func connect(timeout: Double = 10) throws -> EntitledConnection {
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: port), timeout: timeout)
        try connection.connect()
        return connection
    }

    /// Sends one line on a new connection and returns the answer.
    @discardableResult
    func send(_ line: String) throws -> EntitledResponse {
        let connection = try connect()
        defer { connection.close() }
        return try connection.send(line: line)
    }

    /// Sends a line that must succeed.
    @discardableResult
    func ok(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> EntitledResponse {
        let response = try send(line)
        #expect(response.isOK, "\(name): \(line) -> \(response.line)", sourceLocation: sourceLocation)
        return response
    }

    deinit {
        kill9()
    }
}

/// A database of its own for one test, on the suite's PostgreSQL server.
func freshDatabase(on server: PostgresServer, _ name: String = "t\(UInt32.random(in: 0...UInt32.max))") throws -> String {
    try server.createDatabase(name)
    return server.url(database: name)
}

/// Polls `condition` every 50 ms for up to `seconds`.
func eventually(_ seconds: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return try condition()
}

/// What concurrent workers of a test tally, under a lock.
final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var grantIDs: [String: String] = [:]
    private(set) var highest = 0
    private(set) var failures: [String] = []
    private(set) var users: [String] = []

    func withLock<T>(_ body: (Tally) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(self)
    }

    func note(_ answer: EntitledResponse) {
        withLock { tally in
            if answer.isOK { tally.highest = max(tally.highest, Int(answer.sequence ?? 0)) } else { tally.failures.append(answer.line) }
        }
    }

    func fail(_ text: String) { withLock { $0.failures.append(text) } }

    func acknowledged(_ users: [String], seq: Int) {
        withLock { tally in
            tally.users += users
            tally.highest = max(tally.highest, seq)
        }
    }

    /// Records that idempotency key `key` gave membership `id`; a second id for one key is a failure.
    func keyed(_ key: String, _ id: String) {
        withLock { tally in
            if let earlier = tally.grantIDs[key], earlier != id { tally.failures.append("key \(key) gave \(earlier) and \(id)") }
            tally.grantIDs[key] = id
        }
    }

    var keyCount: Int { withLock { $0.grantIDs.count } }
}
