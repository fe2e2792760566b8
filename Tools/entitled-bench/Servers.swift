import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A running `entitled` the benchmark started, on 127.0.0.1 and a port it picked itself (`--port 0`).
struct EntitledProcess {
    let process: ChildProcess
    let port: UInt16
    /// From launch until the ready line arrived, in seconds: for a restart, the recovery time.
    let secondsToReady: Double

    /// Starts `binary` on `dataDirectory` and waits (at most `readyTimeout` seconds) for its ready line.
    static func start(
        binary: String, dataDirectory: String, fsync: String, extraArguments: [String] = [],
        readyTimeout: Double = 120
    ) throws -> EntitledProcess {
        try launch(
            binary,
            ["--data-dir", dataDirectory, "--fsync", fsync] + extraArguments,
            name: "entitled", readyTimeout: readyTimeout
        )
    }

    /// Starts `binary` as a node of the cluster on the database `postgres`, named `name`.
    static func startNode(binary: String, postgres: String, name: String, readyTimeout: Double = 120) throws -> EntitledProcess {
        try launch(binary, ["--postgres", postgres, "--node-name", name], name: "entitled-\(name)", readyTimeout: readyTimeout)
    }

    /// Starts `binary` on 127.0.0.1, a free port and no periodic snapshots, with `arguments`, and waits
    /// (at most `readyTimeout` seconds) for its ready line.
    private static func launch(_ binary: String, _ arguments: [String], name: String, readyTimeout: Double) throws -> EntitledProcess {
        let process = try ChildProcess.launch(
            binary, ["--host", "127.0.0.1", "--port", "0", "--snapshot-interval", "0"] + arguments, name: name
        )
        do {
            let ready = try process.waitForOutputLine(containing: "listening on", timeout: readyTimeout)
            guard let port = Self.port(in: ready.line) else {
                throw BenchError("entitled's ready line names no tcp 127.0.0.1 port: \(ready.line)")
            }
            return EntitledProcess(process: process, port: port, secondsToReady: Double(ready.at - process.launchedAt) / 1e9)
        } catch {
            process.stop(signal: SIGKILL)
            throw error
        }
    }

    /// Defines entitlement `pro` as product `prod_pro` on the entitled at `port`: what every check load
    /// asks for.
    static func defineProEntitlement(port: UInt16) throws {
        let connection = try TCPConnection(port: port)
        let answer = try connection.call(#"{"op":"define","entitlement":"pro","products":["prod_pro"]}"#, reader: LineReader(connection))
        guard answer.hasPrefix(#"{"ok":true"#) else { throw BenchError("entitled refused to define pro: \(answer)") }
    }

    /// The port in `listening on tcp 127.0.0.1:PORT`.
    private static func port(in line: String) -> UInt16? {
        guard let range = line.range(of: "tcp 127.0.0.1:") else { return nil }
        return UInt16(line[range.upperBound...].prefix { $0.isNumber })
    }

    /// The `recovered the data directory` log line and its fields (waiting briefly: standard error is
    /// read by another thread than the ready line).
    func recoveryLine() -> RecoveryLine? {
        guard let found = process.errorOutput.waitForLine(containing: "recovered the data directory", timeout: 5) else {
            return nil
        }
        return RecoveryLine(found.line)
    }

    /// How many `wrote a snapshot` lines the server has logged so far.
    func snapshotLogLines() -> Int {
        // Standard error is read by a thread; a moment lets a line just written arrive.
        usleep(50_000)
        return process.errorOutput.allLines.filter { $0.contains("wrote a snapshot") }.count
    }

    /// Log lines at warning level or above: what the report lists as the server's complaints.
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

/// A running `redis-server` the benchmark started: durable like entitled's `--fsync always`
/// (`appendonly yes`, `appendfsync always`), no RDB snapshots, on 127.0.0.1.
struct RedisProcess {
    let process: ChildProcess
    let port: UInt16

    /// - Parameter appendfsync: `always`, `everysec` or `no`; its append-only file is always on.
    static func start(binary: String, directory: String, appendfsync: String = "always") throws -> RedisProcess {
        let port = try TCPConnection.freePort()
        let process = try ChildProcess.launch(
            binary,
            [
                "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
                "--appendfsync", appendfsync, "--dir", directory,
            ],
            name: "redis-server"
        )
        // Ready when it answers PING; bounded in attempts and time.
        let deadline = monotonicNanoseconds() + nanoseconds(seconds: 20)
        var lastError = "no attempt"
        for _ in 0..<2000 {
            if process.hasExited() || monotonicNanoseconds() > deadline { break }
            do {
                let connection = try TCPConnection(port: port, timeoutSeconds: 5)
                let answer = try connection.call("PING", reader: LineReader(connection))
                if answer.hasPrefix("+PONG") { return RedisProcess(process: process, port: port) }
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
    static func version(binary: String) -> String {
        guard let process = try? ChildProcess.launch(binary, ["--version"], name: "redis-version") else { return "unknown" }
        process.waitForExit(timeout: 10)
        process.stop(signal: SIGKILL, timeout: 1)
        // Its one line; the pipe's end (the reader thread's) comes shortly after the exit.
        return process.output.waitForLine(containing: "v=", timeout: 2)?.line ?? "unknown"
    }
}

/// Finds the programs the benchmark runs.
enum Executables {
    /// The entitled binary (`entitled`, or the one beside this tool) and the redis-server binary
    /// (`redisServer`, a path or a name on PATH); a clear error naming the fix when either is missing.
    static func servers(entitled: String?, redisServer: String) throws -> (entitled: String, redis: String) {
        let entitledPath = entitled ?? defaultEntitled()
        guard isExecutable(entitledPath) else {
            throw BenchError(
                "no entitled binary at \(entitledPath); build it next to this tool (swift build -c release --product entitled, with the same --scratch-path) or pass --entitled PATH"
            )
        }
        guard let redisPath = find(redisServer) else {
            throw BenchError("no \(redisServer) found: install it (apt-get install -y redis-server) or pass --redis-server PATH")
        }
        return (entitledPath, redisPath)
    }

    /// `entitled` in the folder of this executable (the same build folder), from /proc/self/exe.
    static func defaultEntitled() -> String {
        besideThisTool("entitled")
    }

    /// The neutral load generator (`loadgen`, or `entitled-loadgen` beside this tool); a clear error
    /// naming the fix when it is missing.
    static func loadGenerator(_ loadgen: String?) throws -> String {
        let path = loadgen ?? besideThisTool("entitled-loadgen")
        guard isExecutable(path) else {
            throw BenchError(
                "no entitled-loadgen at \(path); build it next to this tool (swift build -c release --product entitled-loadgen, with the same --scratch-path), pass --loadgen PATH, or use --generator swift"
            )
        }
        return path
    }

    /// `name` in the folder of this executable (the same build folder), from /proc/self/exe.
    private static func besideThisTool(_ name: String) -> String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// `name` itself when it contains a slash, else its first executable match on PATH.
    static func find(_ name: String) -> String? {
        if name.contains("/") { return isExecutable(name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if isExecutable(candidate) { return candidate }
        }
        return nil
    }

    static func isExecutable(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && access(path, X_OK) == 0
    }
}
