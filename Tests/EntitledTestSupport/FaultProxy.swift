import Foundation

/// `Tools/faults/fault_proxy.py` as a child process: a TCP proxy between nodes and a PostgreSQL server
/// that holds, cuts or splits a group's COMMIT, partitions, or is re-pointed at another server, when told to
/// (see the script's header).
public final class FaultProxy: @unchecked Sendable {
    /// The port nodes connect to instead of the database's.
    public let port: Int
    private let controlPort: Int
    private let process = Process()
    private let lock = NSLock()
    private var control: FileHandle?
    private var controlSocket: Int32 = -1

    /// The script, found from this file's place in the repository.
    public static var scriptPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tools/faults/fault_proxy.py").path
    }

    /// Starts a proxy in front of the database server listening on 127.0.0.1:`targetPort`.
    public init(targetPort: Int) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.scriptPath, "\(targetPort)"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        let deadline = Date().addingTimeInterval(10)
        while !line.contains(UInt8(ascii: "\n")), Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let ports = String(decoding: line, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard ports.count == 2 else {
            kill(process.processIdentifier, SIGKILL)
            throw TestSupportFailure(description: "the fault proxy did not start (it printed \(String(decoding: line, as: UTF8.self)))")
        }
        port = ports[0]
        controlPort = ports[1]
    }

    deinit {
        // SIGKILL: the test runner blocks SIGTERM in the threads that spawn children, and they inherit it.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        if controlSocket >= 0 { Glibc.close(controlSocket) }
    }

    /// `url` with the database server's port replaced by the proxy's.
    public func proxied(_ url: String, databasePort: Int) -> String {
        url.replacingOccurrences(of: ":\(databasePort)/", with: ":\(port)/")
    }

    /// Sends one command and returns the proxy's one-line answer.
    @discardableResult
    public func command(_ line: String) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if controlSocket < 0 { controlSocket = try Self.connect(port: controlPort) }
        let bytes = Array((line + "\n").utf8)
        guard bytes.withUnsafeBytes({ send(controlSocket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            throw TestSupportFailure(description: "the fault proxy's control connection failed")
        }
        var answer: [UInt8] = []
        var byte: UInt8 = 0
        while recv(controlSocket, &byte, 1, 0) == 1 {
            if byte == UInt8(ascii: "\n") { return String(decoding: answer, as: UTF8.self) }
            answer.append(byte)
        }
        throw TestSupportFailure(description: "the fault proxy closed its control connection")
    }

    /// Arms `mode` (`cut`, `split`, `drop`, `hold`) for the next group's COMMIT.
    public func arm(_ mode: String, seconds: Double = 1) throws {
        try command("arm \(mode) \(seconds)")
    }

    /// Whether the armed action fired within `seconds`.
    public func waitFired(seconds: Double = 10) throws -> Bool {
        try command("wait-fired \(seconds)") == "yes"
    }

    public func partition() throws { try command("partition") }
    public func heal() throws { try command("heal") }

    /// Re-points the proxy at the server on 127.0.0.1:`port` (`target PORT`), as a failover to a promoted
    /// standby does: new connections go there, and every open one is reset.
    public func retarget(port: Int) throws {
        let answer = try command("target \(port)")
        guard answer == "ok" else {
            throw TestSupportFailure(description: "the fault proxy refused `target \(port)`: \(answer)")
        }
    }

    private static func connect(port: Int) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            throw TestSupportFailure(description: "cannot reach the fault proxy's control port \(port)")
        }
        return descriptor
    }
}
