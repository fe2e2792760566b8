import Foundation

/// A running `redis-server` the benchmark started on 127.0.0.1: its append-only file on, synced as
/// `appendfsync` says, no RDB snapshots.
struct RedisProcess {
    let process: ChildProcess
    let port: UInt16

    /// Starts it and waits until it answers PING (bounded in attempts and time).
    static func start(binary: String, directory: String, appendfsync: String = "always") throws -> RedisProcess {
        let port = try TCPConnection.freePort()
        let arguments = ["--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--appendfsync", appendfsync, "--dir", directory]
        let process = try ChildProcess.launch(binary, arguments, name: "redis-server")
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

    /// Redis's `INFO memory`, as its `name:value` fields.
    static func infoMemory(port: UInt16) throws -> [String: String] {
        let connection = try TCPConnection(port: port, timeoutSeconds: 10)
        let reader = LineReader(connection)
        // A bulk string: `$LENGTH\r\n`, then LENGTH bytes of `name:value\r\n` lines and `# Section\r\n` headers.
        let header = try connection.call("INFO memory", reader: reader).trimmingCharacters(in: .whitespacesAndNewlines)
        guard header.hasPrefix("$"), let length = Int(header.dropFirst()) else { throw BenchError("redis answered INFO memory with \(header.prefix(200))") }
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
}
