import CEpoll
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A blocking TCP connection to a port on 127.0.0.1, with TCP_NODELAY (a request must leave at once, not
/// wait for Nagle) and send and receive timeouts, so a stalled server becomes an error instead of a hang.
///
/// A raw socket, not the `EntitledClient` library: the load generator speaks to entitled and to Redis
/// (RESP) alike, the same code for both so that their comparison is fair, and it must cost the measured
/// machine as little as it can (it polls with `--generator-spin` and parses nothing it does not need).
/// It is a measuring instrument, not a client of the protocol.
///
/// One thread writes and one thread reads at a time (they may be different threads: the pipelined loader
/// writes and reads on two). The descriptor is closed when the last reference goes away.
final class TCPConnection: Sendable {
    let descriptor: Int32
    let port: UInt16

    init(port: UInt16, timeoutSeconds: Int = 60) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError.system("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(descriptor)
            throw BenchError.system("connect to 127.0.0.1:\(port)", code)
        }
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.descriptor = descriptor
        self.port = port
    }

    deinit {
        close(descriptor)
    }

    /// Sends every byte, retrying short writes.
    func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        guard var next = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let sent = send(descriptor, next, left, Int32(MSG_NOSIGNAL))
            if sent < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    throw BenchError("the server on port \(port) took no data for the send timeout: stalled")
                }
                throw BenchError.system("send to port \(port)")
            }
            next += sent
            left -= sent
        }
    }

    /// Sends every byte of `bytes`.
    func writeAll(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try writeAll($0) }
    }

    /// Receives at most `count` bytes into `buffer`; returns how many (0: the server closed the connection).
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        while true {
            let received = recv(descriptor, buffer, count, 0)
            if received >= 0 { return received }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK {
                throw BenchError("no answer from the server on port \(port) within the receive timeout: stalled")
            }
            throw BenchError.system("recv from port \(port)")
        }
    }

    /// Ends both directions, which wakes a thread blocked reading or writing this connection.
    func shutdownBoth() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Sends one text line (adding the newline) and returns the answer line: for the few one-off requests.
    func call(_ line: String, reader: LineReader) throws -> String {
        try writeAll(Array((line + "\n").utf8))
        return String(decoding: try reader.readLine(), as: UTF8.self)
    }

    /// A free TCP port on 127.0.0.1 for a server that cannot pick its own and report it (redis-server).
    /// Another process could take it before the server binds it; the server then fails to start, loudly.
    static func freePort() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError.system("socket") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw BenchError.system("bind to a free port") }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// Reads newline-terminated lines from a connection into one fixed buffer, so that reading an answer
/// allocates nothing. A line returned is valid only until the next `readLine()`. Used by one thread.
final class LineReader {
    private let connection: TCPConnection
    private let buffer: UnsafeMutableRawPointer
    private let capacity: Int
    private var start = 0
    private var end = 0

    init(_ connection: TCPConnection, capacity: Int = 1 << 16) {
        self.connection = connection
        self.capacity = capacity
        self.buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        buffer.deallocate()
    }

    /// The next line, without its `\n` (a `\r` before it stays: RESP callers look only at the first byte).
    func readLine() throws -> UnsafeRawBufferPointer {
        while true {
            if end > start, let newline = memchr(buffer + start, 0x0A, end - start) {
                let lineStart = start
                let length = (buffer + lineStart).distance(to: newline)
                start = lineStart + length + 1
                if start == end {
                    start = 0
                    end = 0
                }
                return UnsafeRawBufferPointer(start: buffer + lineStart, count: length)
            }
            if start > 0 {
                // Move the partial line to the front; this happens at most once per read.
                memmove(buffer, buffer + start, end - start)
                end -= start
                start = 0
            }
            guard end < capacity else {
                throw BenchError("an answer line from port \(connection.port) is longer than \(capacity) bytes")
            }
            let received = try connection.read(into: buffer + end, count: capacity - end)
            guard received > 0 else {
                throw BenchError("the server on port \(connection.port) closed the connection")
            }
            end += received
        }
    }
}

extension UnsafeRawBufferPointer {
    /// Whether these bytes begin with `prefix`: how answers are classified without decoding them.
    @inline(__always)
    func starts(with prefix: StaticString) -> Bool {
        let length = prefix.utf8CodeUnitCount
        guard count >= length, let base = baseAddress else { return false }
        return memcmp(base, prefix.utf8Start, length) == 0
    }
}
