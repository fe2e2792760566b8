import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// One `entitled --postgres` process of a test's cluster, on a free port, with a blocking client.
final class ClusterNode {
    let name: String
    let url: String
    let directory: TemporaryDirectory
    private(set) var process: ServerProcess
    private(set) var port = 0
    private let extraArguments: [String]

    init(name: String, url: String, arguments: [String] = []) throws {
        self.name = name
        self.url = url
        self.extraArguments = arguments
        directory = try TemporaryDirectory()
        process = ServerProcess(arguments: [], workingDirectory: directory.path)
        try start()
    }

    var arguments: [String] {
        ["--postgres", url, "--node-name", name, "--port", "0", "--snapshot-interval", "0", "--log-level", "debug"] + extraArguments
    }

    /// Starts (again) and waits for the ready line.
    func start() throws {
        process = ServerProcess(arguments: arguments, workingDirectory: directory.path)
        port = try #require(try process.startAndWaitUntilReady())
    }

    func kill9() {
        _ = process.stop(with: SIGKILL)
    }

    func stop() {
        _ = process.stop()
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
        _ = process.stop(with: SIGKILL)
    }
}

extension EntitledResponse {
    /// The change number a write answer carries.
    var seq: Int? { self["seq"]?.intValue }
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
