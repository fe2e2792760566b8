import Foundation

/// A running `entitled` the benchmark started, on 127.0.0.1 and a port it picked itself (`--port 0`), with
/// no periodic snapshots.
struct EntitledProcess {
    let process: ChildProcess
    let port: UInt16
    /// From launch until the ready line arrived, in seconds: for a restart, the recovery time.
    let secondsToReady: Double

    /// Starts `binary` on `dataDirectory` and waits (at most `readyTimeout` seconds) for its ready line.
    static func start(binary: String, dataDirectory: String, fsync: String, extraArguments: [String] = [], readyTimeout: Double = 120) throws
        -> EntitledProcess
    {
        try launch(binary, ["--data-dir", dataDirectory, "--fsync", fsync] + extraArguments, name: "entitled", readyTimeout: readyTimeout)
    }

    /// Starts `binary` as the cluster node `name` on the database `postgres`.
    static func startNode(binary: String, postgres: String, name: String) throws -> EntitledProcess {
        try launch(binary, ["--postgres", postgres, "--node-name", name], name: "entitled-\(name)", readyTimeout: 120)
    }

    private static func launch(_ binary: String, _ arguments: [String], name: String, readyTimeout: Double) throws -> EntitledProcess {
        let process = try ChildProcess.launch(binary, ["--host", "127.0.0.1", "--port", "0", "--snapshot-interval", "0"] + arguments, name: name)
        do {
            // `... listening on tcp 127.0.0.1:PORT ...`
            let ready = try process.waitForOutputLine(containing: "listening on", timeout: readyTimeout)
            guard let at = ready.line.range(of: "tcp 127.0.0.1:"), let port = UInt16(ready.line[at.upperBound...].prefix { $0.isNumber }) else {
                throw BenchError("entitled's ready line names no tcp 127.0.0.1 port: \(ready.line)")
            }
            return EntitledProcess(process: process, port: port, secondsToReady: Double(ready.at - process.launchedAt) / 1e9)
        } catch {
            process.stop(signal: SIGKILL)
            throw error
        }
    }

    /// Defines entitlement `pro` as product `prod_pro` on the entitled at `port`: what every check load asks for.
    static func defineProEntitlement(port: UInt16) throws {
        let connection = try TCPConnection(port: port)
        let answer = try connection.call(#"{"op":"define","entitlement":"pro","products":["prod_pro"]}"#, reader: LineReader(connection))
        guard answer.hasPrefix(#"{"ok":true"#) else { throw BenchError("entitled refused to define pro: \(answer)") }
    }

    /// The `recovered the data directory` log line (waiting briefly: standard error has a reader of its own).
    func recoveryLine() -> RecoveryLine? {
        process.errorOutput.waitForLine(containing: "recovered the data directory", timeout: 5).map { RecoveryLine($0.line) }
    }

    /// How many `wrote a snapshot` lines the server has logged so far.
    func snapshotLogLines() -> Int {
        // Standard error is read by a thread; a moment lets a line just written arrive.
        usleep(50_000)
        return process.errorOutput.allLines.filter { $0.contains("wrote a snapshot") }.count
    }

    /// Log lines at warning level or above: the server's complaints, for the report.
    func problemLines() -> [String] {
        process.errorOutput.allLines.filter { line in
            let fields = line.split(separator: " ", maxSplits: 2)
            return fields.count >= 2 && ["warning", "error", "critical"].contains(String(fields[1]))
        }
    }
}

/// entitled's recovery log line: `... ms=412 ... replayed=5000 ... recovered the data directory`.
struct RecoveryLine: Codable {
    let line: String
    let milliseconds: Int?
    let replayed: Int?
    let memberships: Int?
    let snapshot: String?

    init(_ line: String) {
        var fields: [String: String] = [:]
        for token in line.split(separator: " ") {
            guard let equals = token.firstIndex(of: "=") else { continue }
            fields[String(token[..<equals])] = String(token[token.index(after: equals)...])
        }
        self.line = line
        milliseconds = fields["ms"].flatMap { Int($0) }
        replayed = fields["replayed"].flatMap { Int($0) }
        memberships = fields["memberships"].flatMap { Int($0) }
        snapshot = fields["snapshot"]
    }
}
