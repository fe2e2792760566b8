import Foundation

/// A real `entitled-stores` process on a free loopback port, in front of an `entitled` at `entitled`
/// (`HOST:PORT`), stopped when this is released.
public final class RunningStores {
    public let directory: TemporaryDirectory
    public private(set) var port = 0
    private var process: ServerProcess?
    private let arguments: [String]
    private let environment: [String: String]

    /// - Parameters:
    ///   - environment: `ENTITLED_STORES_*` variables (secrets go there, as in production).
    ///   - arguments: further options.
    public init(entitled: String, environment: [String: String] = [:], arguments: [String] = []) throws {
        directory = try TemporaryDirectory()
        self.arguments = ["--entitled", entitled, "--log-level", "warning"] + arguments
        self.environment = environment
        try start(port: 0)
    }

    deinit {
        _ = process?.stop()
    }

    /// Starts it again on the port it had.
    public func restart() throws {
        _ = process?.stop()
        process = nil
        try start(port: port)
    }

    private func start(port requested: Int) throws {
        let process = ServerProcess(
            arguments: ["--listen", "127.0.0.1:\(requested)"] + arguments, workingDirectory: directory.path,
            environment: environment, executable: "entitled-stores"
        )
        try process.startAndWaitUntilReady()
        guard let match = process.readyLine.firstMatch(of: /listening on http:\/\/127\.0\.0\.1:(\d+)/), let bound = Int(match.1) else {
            throw TestSupportFailure(description: "entitled-stores did not say where it listens: \(process.readyLine); stderr: \(process.standardErrorText())")
        }
        port = bound
        self.process = process
    }

    /// Kills it with SIGKILL, as a crash would, and waits for it.
    public func kill() {
        _ = process?.stop(with: SIGKILL)
        process = nil
    }

    /// What it logged so far (stopping it first).
    public func stopAndReadLog() -> String {
        guard let process else { return "" }
        _ = process.stop()
        self.process = nil
        return process.standardErrorText()
    }

    /// Sends one HTTP/1.1 request and returns the status and body (`Connection: close`).
    public func post(_ path: String, body: [UInt8], headers: [String: String] = [:]) throws -> HTTPReply {
        try HTTPReply.exchange(port: port, method: "POST", path: path, body: body, headers: headers)
    }

    /// Sends again, as a store retries, while the answer is 503 (the receiver's connection pool waits out
    /// its reconnect backoff after `entitled` came back): 0.1 s apart, for at most 30 s (generous: on a
    /// machine busy with the whole suite both processes may get their turns late).
    public func retryingWhileUnavailable(_ send: () throws -> HTTPReply) throws -> HTTPReply {
        var reply = try send()
        let deadline = Date().addingTimeInterval(30)
        while reply.status == 503, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            reply = try send()
        }
        return reply
    }

    public func get(_ path: String, headers: [String: String] = [:]) throws -> HTTPReply {
        try HTTPReply.exchange(port: port, method: "GET", path: path, body: [], headers: headers)
    }
}

/// An HTTP answer: the status code and the body as text.
public struct HTTPReply: Sendable {
    public var status: Int
    public var body: String

    /// A blocking HTTP/1.1 exchange over a fresh loopback connection: enough for tests, not a client.
    public static func exchange(port: Int, method: String, path: String, body: [UInt8], headers: [String: String]) throws -> HTTPReply {
        let descriptor = try LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 30)
        defer { close(descriptor) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let request = Array((head + "\r\n").utf8) + body
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw TestSupportFailure(description: "send: errno \(errno)") }
            sent += count
        }
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 { reply += chunk[..<count] } else { break }
        }
        let text = String(decoding: reply, as: UTF8.self)
        guard let statusLine = text.split(separator: "\r\n").first, let code = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw TestSupportFailure(description: "no HTTP answer: \(text.prefix(200))")
        }
        let bodyText = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return HTTPReply(status: code, body: bodyText)
    }
}
