import EntitledClient
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A raw byte pipe to the server, deliberately NOT a protocol client: it writes exactly the bytes a test
/// gives it, in the pieces the test chooses, and reads lines back, so framing tests control the wire down
/// to the byte (split writes, invalid UTF-8, CRLF, half-close, resets, batches in one write, a full
/// receive buffer). Tests that exchange requests and answers use EntitledClient instead: there is one
/// Swift client of the protocol in the repository.
public final class RawSocket {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) { self.description = description }
    }

    private var descriptor: Int32
    private var received: [UInt8] = []
    private var sawEndOfStream = false
    /// The stream ended with a reset (ECONNRESET) rather than an orderly end: answers may have been lost.
    public private(set) var wasReset = false

    /// Connects over TCP to 127.0.0.1. A `receiveBufferSize` shrinks the socket's receive buffer (set
    /// before connecting, so the TCP window follows), for tests of clients that read slowly or never.
    ///
    /// `host` and `source` (IPv4 addresses) connect elsewhere and from a given local address: another
    /// loopback address (127.1.2.3) or one of the machine's own, for tests of what the server does per
    /// client address.
    public init(
        port: Int, host: String = "127.0.0.1", from source: String? = nil, timeoutSeconds: Int = 10, receiveBufferSize: Int32? = nil
    ) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket() failed: \(errno)") }
        if var size = receiveBufferSize {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                Glibc.close(descriptor)
                throw Failure(description: "bind to \(source) failed: errno \(errno)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            Glibc.close(descriptor)
            throw Failure(description: "connect to port \(port) failed: errno \(errno)")
        }
        var noDelay: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        setTimeout(seconds: timeoutSeconds)
    }

    /// Connects to a Unix domain socket.
    public init(unixSocketPath path: String, timeoutSeconds: Int = 10) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket() failed: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes.prefix(raw.count - 1))
        }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else {
            Glibc.close(descriptor)
            throw Failure(description: "connect to \(path) failed: errno \(errno)")
        }
        setTimeout(seconds: timeoutSeconds)
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    private func setTimeout(seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends `text` as it is (no newline added).
    public func send(_ text: String) throws {
        try send(bytes: Array(text.utf8))
    }

    /// Sends raw bytes as they are.
    public func send(bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw Failure(description: "send failed: errno \(errno)") }
            offset += written
        }
    }

    /// Sends as much of `bytes` as the socket takes without blocking; returns how many bytes it took.
    public func sendWithoutBlocking(bytes: [UInt8]) throws -> Int {
        let written = bytes.withUnsafeBytes {
            Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        if written < 0 {
            guard errno == EAGAIN || errno == EWOULDBLOCK else { throw Failure(description: "send failed: errno \(errno)") }
            return 0
        }
        return written
    }

    /// Resets the connection (SO_LINGER 0, then close): the server sees ECONNRESET, not an orderly end.
    public func reset() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        Glibc.close(descriptor)
        descriptor = -1
    }

    /// Closes the sending side (the server sees end of input) but keeps reading.
    public func closeSending() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    /// The next response line without its newline, or `nil` when the server closed the connection.
    public func readLine() throws -> String? {
        while true {
            if let newline = received.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: received[..<newline], as: UTF8.self)
                received.removeSubrange(...newline)
                return line
            }
            if sawEndOfStream { return nil }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 {
                sawEndOfStream = true
            } else if count < 0 {
                if errno == ECONNRESET {
                    sawEndOfStream = true
                    wasReset = true
                } else {
                    throw Failure(description: "no response within the timeout (errno \(errno))")
                }
            } else {
                received.append(contentsOf: chunk[..<count])
            }
        }
    }

    /// Every complete line the server has sent so far, without waiting for more.
    public func readAvailableLines() -> [String] {
        while !sawEndOfStream {
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else {
                if count == 0 { sawEndOfStream = true }
                break
            }
            received.append(contentsOf: chunk[..<count])
        }
        var lines: [String] = []
        while let newline = received.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: received[..<newline], as: UTF8.self))
            received.removeSubrange(...newline)
        }
        return lines
    }

    /// Whether the server has closed the connection (reads end of stream with no further line).
    public func isClosedByServer() throws -> Bool {
        try readLine() == nil
    }
}

extension RawSocket {
    /// The next line, read as an answer by the client library's parser; fails when the server closed the
    /// connection instead.
    public func readResponse() throws -> EntitledResponse {
        guard let line = try readLine() else { throw Failure(description: "the server closed the connection") }
        return try EntitledResponse(line: line)
    }
}
