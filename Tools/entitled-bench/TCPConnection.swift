import Foundation

/// A blocking TCP connection to 127.0.0.1, with TCP_NODELAY and send and receive timeouts (a stalled server
/// becomes an error, not a hang). A raw socket, not `EntitledClient`: it speaks to entitled and Redis alike
/// and parses nothing it does not need. One thread writes and one reads at a time.
final class TCPConnection: Sendable {
    let descriptor: Int32
    let port: UInt16

    init(port: UInt16, timeoutSeconds: Int = 60) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError.system("socket") }
        var address = Self.loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
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

    deinit { close(descriptor) }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// Sends every byte, retrying short writes.
    func writeAll(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var sentSoFar = 0
            while sentSoFar < raw.count {
                let sent = send(descriptor, base + sentSoFar, raw.count - sentSoFar, Int32(MSG_NOSIGNAL))
                if sent >= 0 {
                    sentSoFar += sent
                } else if errno == EAGAIN || errno == EWOULDBLOCK {
                    throw BenchError("the server on port \(port) took no data for the send timeout: stalled")
                } else if errno != EINTR {
                    throw BenchError.system("send to port \(port)")
                }
            }
        }
    }

    /// Receives at most `count` bytes into `buffer`; returns how many (0: the server closed the connection).
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        while true {
            let received = recv(descriptor, buffer, count, 0)
            if received >= 0 { return received }
            if errno == EAGAIN || errno == EWOULDBLOCK {
                throw BenchError("no answer from the server on port \(port) within the receive timeout: stalled")
            }
            if errno != EINTR { throw BenchError.system("recv from port \(port)") }
        }
    }

    /// Ends both directions, which wakes a thread blocked reading or writing this connection.
    func shutdownBoth() { shutdown(descriptor, Int32(SHUT_RDWR)) }

    /// Sends one line (adding the newline) and returns the answer line: for the few one-off requests. Calls
    /// on one connection share a `reader`, which may hold what the server sent beyond the answer.
    func call(_ line: String, reader: LineReader? = nil) throws -> String {
        try writeAll(Array((line + "\n").utf8))
        return String(decoding: try (reader ?? LineReader(self)).readLine(), as: UTF8.self)
    }

    /// A free TCP port on 127.0.0.1 for a server that cannot pick its own and report it (redis-server).
    /// Another process could take it before the server binds it; the server then fails to start, loudly.
    static func freePort() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError.system("socket") }
        defer { close(descriptor) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
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
    private let capacity = 1 << 16
    private var start = 0
    private var end = 0

    init(_ connection: TCPConnection) {
        self.connection = connection
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// The next line, without its `\n` (a `\r` before it stays: RESP callers look only at its first bytes).
    func readLine() throws -> UnsafeRawBufferPointer {
        while true {
            if end > start, let newline = memchr(buffer + start, 0x0A, end - start) {
                let line = UnsafeRawBufferPointer(start: buffer + start, count: (buffer + start).distance(to: newline))
                start += line.count + 1
                if start == end { (start, end) = (0, 0) }
                return line
            }
            if start > 0 {
                // Move the partial line to the front; this happens at most once per read.
                memmove(buffer, buffer + start, end - start)
                (start, end) = (0, end - start)
            }
            guard end < capacity else { throw BenchError("an answer line from port \(connection.port) is longer than \(capacity) bytes") }
            let received = try connection.read(into: buffer + end, count: capacity - end)
            guard received > 0 else { throw BenchError("the server on port \(connection.port) closed the connection") }
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
