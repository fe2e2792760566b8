import Foundation

/// A server the benchmark started on 127.0.0.1, entitled or redis-server: what a load talks to, and whose
/// CPU time and memory the benchmark reads.
struct Server {
    let target: Target
    let process: ChildProcess
    let port: UInt16
    /// From launch until the server was ready, in seconds: for a restart of entitled, the recovery time.
    let secondsToReady: Double

    var pid: pid_t { process.pid }

    /// entitled on `dataDirectory`, with `options` added.
    static func entitled(_ binary: String, dataDirectory: String, fsync: String, options: [String] = []) throws -> Server {
        try entitled(binary, ["--data-dir", dataDirectory, "--fsync", fsync] + options, name: "entitled")
    }

    /// entitled as the cluster node `name` on the database `postgres`.
    static func node(_ binary: String, postgres: String, name: String) throws -> Server {
        try entitled(binary, ["--postgres", postgres, "--node-name", name], name: "entitled-\(name)")
    }

    /// Starts entitled on a port it picks itself (`--port 0`, read from its ready line, waited for at most
    /// two minutes) and with no periodic snapshots, which would disturb the measurements.
    private static func entitled(_ binary: String, _ arguments: [String], name: String) throws -> Server {
        let process = try ChildProcess.launch(binary, entitledArguments(port: 0) + arguments, name: name)
        do {
            // `... listening on tcp 127.0.0.1:PORT ...`
            let ready = try process.waitForOutputLine(containing: "listening on", timeout: 120)
            guard let at = ready.line.range(of: "tcp 127.0.0.1:"), let port = UInt16(ready.line[at.upperBound...].prefix { $0.isNumber }) else {
                throw BenchError("entitled's ready line names no tcp 127.0.0.1 port: \(ready.line)")
            }
            return Server(target: .entitled, process: process, port: port, secondsToReady: Double(ready.at - process.launchedAt) / 1e9)
        } catch {
            process.stop(signal: SIGKILL)
            throw error
        }
    }

    /// How every entitled the benchmark runs is started: on 127.0.0.1, with no periodic snapshots.
    static func entitledArguments(port: UInt16) -> [String] {
        ["--host", "127.0.0.1", "--port", "\(port)", "--snapshot-interval", "0"]
    }

    /// How every redis-server the benchmark runs is started: its append-only file on, synced as
    /// `appendfsync` says, no RDB snapshots of its own.
    static func redisArguments(port: UInt16, directory: String, appendfsync: String) -> [String] {
        ["--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--appendfsync", appendfsync, "--dir", directory]
    }

    /// redis-server in `directory` (made if missing), as `redisArguments` says; ready once it answers PING
    /// (bounded in attempts and time).
    static func redis(_ binary: String, directory: String, appendfsync: String) throws -> Server {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let port = try TCPConnection.freePort()
        let process = try ChildProcess.launch(binary, redisArguments(port: port, directory: directory, appendfsync: appendfsync), name: "redis-server")
        let deadline = monotonicNanoseconds() + nanoseconds(seconds: 20)
        var lastError = "no attempt"
        for _ in 0..<2000 {
            if process.hasExited() || monotonicNanoseconds() > deadline { break }
            do {
                let answer = try TCPConnection(port: port, timeoutSeconds: 5).call("PING")
                if answer.hasPrefix("+PONG") {
                    return Server(target: .redis, process: process, port: port, secondsToReady: Double(monotonicNanoseconds() - process.launchedAt) / 1e9)
                }
                lastError = "PING answered \(answer)"
            } catch {
                lastError = "\(error)"
            }
            usleep(10_000)
        }
        process.stop(signal: SIGKILL)
        let tail = process.output.text.split(separator: "\n").suffix(8).joined(separator: "\n    ")
        throw BenchError("redis-server on port \(port) did not become ready (\(lastError)); its output ends with:\n    \(tail)")
    }

    /// `redis-server --version`, e.g. `Redis server v=7.0.15 ...`.
    static func redisVersion(binary: String) -> String {
        guard let process = try? ChildProcess.launch(binary, ["--version"], name: "redis-version") else { return "unknown" }
        process.waitForExit(timeout: 10)
        process.stop(signal: SIGKILL, timeout: 1)
        // Its one line; the pipe's end (the reader thread's) comes shortly after the exit.
        return process.output.waitForLine(containing: "v=", timeout: 2)?.line ?? "unknown"
    }

    /// entitled's answers to checks of `pro` for `users` that do not give access: none when all have it.
    func denied(_ users: [String]) throws -> [String] {
        let connection = try TCPConnection(port: port, timeoutSeconds: 30)
        let reader = LineReader(connection)
        return try users.compactMap { user in
            let answer = try connection.call(#"{"op":"check","user":"\#(user)","entitlement":"pro"}"#, reader: reader)
            return answer.hasPrefix(#"{"ok":true,"active":true"#) ? nil : "check of \(user) answered \(answer)"
        }
    }

    /// Defines entitlement `pro` as product `prod_pro` on entitled: what every check load asks for.
    func definePro() throws {
        let answer = try TCPConnection(port: port).call(#"{"op":"define","entitlement":"pro","products":["prod_pro"]}"#)
        guard answer.hasPrefix(#"{"ok":true"#) else { throw BenchError("entitled refused to define pro: \(answer)") }
    }

    /// Redis's `INFO memory`, as its `name:value` fields.
    func redisInfoMemory() throws -> [String: String] {
        try redisInfo("memory")
    }

    /// Redis's `INFO <section>`, as its `name:value` fields.
    func redisInfo(_ section: String) throws -> [String: String] {
        let connection = try TCPConnection(port: port, timeoutSeconds: 10)
        let reader = LineReader(connection)
        // A bulk string: `$LENGTH\r\n`, then LENGTH bytes of `name:value\r\n` lines and `# Section\r\n` headers.
        let header = try connection.call("INFO \(section)", reader: reader).trimmingCharacters(in: .whitespacesAndNewlines)
        guard header.hasPrefix("$"), let length = Int(header.dropFirst()) else { throw BenchError("redis answered INFO \(section) with \(header.prefix(200))") }
        var fields: [String: String] = [:]
        var consumed = 0
        while consumed < length {
            let line = try reader.readLine()
            consumed += line.count + 1
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.hasPrefix("#"), let colon = text.firstIndex(of: ":") else { continue }
            fields[String(text[..<colon])] = String(text[text.index(after: colon)...])
        }
        return fields
    }

    /// entitled's `recovered the data directory` log line (waiting briefly: standard error has a reader of its own).
    func recoveryLine() -> RecoveryLine? {
        process.errorOutput.waitForLine(containing: "recovered the data directory", timeout: 5).map { RecoveryLine($0.line) }
    }

    /// How many `wrote a snapshot` lines entitled has logged so far.
    func snapshotLogLines() -> Int {
        // Standard error is read by a thread; a moment lets a line just written arrive.
        usleep(50_000)
        return process.errorOutput.allLines.filter { $0.contains("wrote a snapshot") }.count
    }

    /// entitled's log lines at warning level or above: its complaints, for the report.
    func problemLines() -> [String] {
        process.errorOutput.allLines.filter { line in
            let fields = line.split(separator: " ", maxSplits: 2)
            return fields.count >= 2 && ["warning", "error", "critical"].contains(String(fields[1]))
        }
    }
}
