import EntitledTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A scripted line server on 127.0.0.1, for failures a real `entitled` never shows on demand: silence,
/// a garbage line, a connection closed after a request was read. It records every line it receives.
final class FakeLineServer: @unchecked Sendable {
    /// What the server does with one request line.
    enum Reply: Sendable {
        case line(String)
        /// Close the connection without answering.
        case close
        /// Never answer (the connection stays open).
        case silence
    }

    let port: Int
    private let listener: Int32
    private let reply: @Sendable (String) -> Reply
    private let lock = NSLock()
    private var lines: [String] = []
    private var connections = 0

    init(reply: @escaping @Sendable (String) -> Reply) throws {
        self.reply = reply
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound, listen(listener, 16) == 0 else { throw TestSupportFailure(description: "fake server: bind failed: errno \(errno)") }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Every line received so far, over all connections.
    var receivedLines: [String] {
        lock.withLock { lines }
    }

    /// How many connections were accepted.
    var acceptedConnections: Int {
        lock.withLock { connections }
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            lock.withLock { connections += 1 }
            Thread.detachNewThread { [self] in serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            buffer.append(contentsOf: chunk[..<count])
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                lock.withLock { lines.append(line) }
                switch reply(line) {
                case .line(let answer):
                    let bytes = Array((answer + "\n").utf8)
                    _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                case .close:
                    close(connection)
                    return
                case .silence:
                    break
                }
            }
        }
        close(connection)
    }
}
