#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A blocking-by-deadline stream socket that sends lines and reads lines: non-blocking underneath, with
/// `poll` waiting up to a deadline, so a silent server is a timeout and never a hang. Used by one thread.
///
/// Plain POSIX rather than SwiftNIO: the console is one person typing one command at a time, and a
/// synchronous socket lets it live beside libedit's blocking `el_gets` without an event loop thread.
final class LineSocket {
    private let descriptor: Int32
    let address: ServerAddress
    private var received: [UInt8] = []
    private var scanned = 0

    private init(descriptor: Int32, address: ServerAddress) {
        self.descriptor = descriptor
        self.address = address
    }

    deinit {
        close(descriptor)
    }

    /// Connects to `address`, trying each address a host name resolves to, within `timeout` seconds.
    static func connect(to address: ServerAddress, timeout: Double) throws(EntitledClientError) -> LineSocket {
        let deadline = Deadline(seconds: timeout)
        switch address {
        case .unixSocket(let path):
            var socketAddress = sockaddr_un()
            socketAddress.sun_family = sa_family_t(AF_UNIX)
            let pathBytes = Array(path.utf8)
            let capacity = MemoryLayout.size(ofValue: socketAddress.sun_path)
            guard pathBytes.count < capacity else {
                throw .cannotConnect(address: address, reason: "the socket path is longer than \(capacity - 1) bytes")
            }
            withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: pathBytes) }
            let length = socklen_t(MemoryLayout<sockaddr_un>.size)
            let result = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    attempt(family: AF_UNIX, address: $0, length: length, deadline: deadline)
                }
            }
            switch result {
            case .success(let descriptor): return LineSocket(descriptor: descriptor, address: address)
            case .failure(let reason): throw .cannotConnect(address: address, reason: reason)
            }
        case .tcp(let host, let port):
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            hints.ai_flags = AI_NUMERICSERV
            var list: UnsafeMutablePointer<addrinfo>?
            let status = getaddrinfo(host, String(port), &hints, &list)
            guard status == 0, let first = list else {
                throw .cannotConnect(address: address, reason: String(cString: gai_strerror(status)).lowercasedFirstLetter)
            }
            defer { freeaddrinfo(list) }
            var lastReason = "no address to connect to"
            var candidate: UnsafeMutablePointer<addrinfo>? = first
            while let info = candidate {
                switch attempt(family: info.pointee.ai_family, address: info.pointee.ai_addr, length: info.pointee.ai_addrlen, deadline: deadline) {
                case .success(let descriptor):
                    var one: Int32 = 1
                    setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                    return LineSocket(descriptor: descriptor, address: address)
                case .failure(let reason):
                    lastReason = reason
                }
                candidate = info.pointee.ai_next
            }
            throw .cannotConnect(address: address, reason: lastReason)
        }
    }

    private enum Attempt {
        case success(Int32)
        case failure(String)
    }

    /// One non-blocking connect, waited for until the deadline.
    private static func attempt(family: Int32, address: UnsafePointer<sockaddr>, length: socklen_t, deadline: Deadline) -> Attempt {
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { return .failure(errorText(errno)) }
        if Glibc.connect(descriptor, address, length) == 0 { return .success(descriptor) }
        guard errno == EINPROGRESS || errno == EAGAIN else {
            let code = errno
            close(descriptor)
            return .failure(errorText(code))
        }
        guard waitFor(descriptor: descriptor, events: Int16(POLLOUT), until: deadline) else {
            close(descriptor)
            return .failure("timed out")
        }
        var code: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &size)
        guard code == 0 else {
            close(descriptor)
            return .failure(errorText(code))
        }
        return .success(descriptor)
    }

    /// Sends `line` and a newline, all of it, before the deadline.
    func send(line: String, deadline: Deadline) throws(EntitledClientError) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent >= 0 {
                offset += sent
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                guard Self.waitFor(descriptor: descriptor, events: Int16(POLLOUT), until: deadline) else {
                    throw .timedOut(address: address, seconds: deadline.seconds)
                }
            case EPIPE, ECONNRESET: throw .connectionClosed(address: address)
            case let code: throw .connectionFailed(address: address, reason: Self.errorText(code))
            }
        }
    }

    /// The next line the peer sends, without its newline, received before the deadline.
    func readLine(deadline: Deadline, maximumLength: Int) throws(EntitledClientError) -> String {
        while true {
            if let newline = received[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > 0, received[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let line = String(decoding: received[..<end], as: UTF8.self)
                received.removeSubrange(...newline)
                scanned = 0
                return line
            }
            scanned = received.count
            guard received.count <= maximumLength else { throw .responseTooLarge(address: address, limit: maximumLength) }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received.append(contentsOf: chunk[..<count])
            } else if count == 0 {
                throw .connectionClosed(address: address)
            } else {
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK:
                    guard Self.waitFor(descriptor: descriptor, events: Int16(POLLIN), until: deadline) else {
                        throw .timedOut(address: address, seconds: deadline.seconds)
                    }
                case ECONNRESET: throw .connectionClosed(address: address)
                case let code: throw .connectionFailed(address: address, reason: Self.errorText(code))
                }
            }
        }
    }

    /// Whether the peer has closed its side (or reset): a read would see the end of the stream. Looks
    /// without waiting and without consuming anything.
    var peerHasClosed: Bool {
        var probe = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&probe, 1, 0) > 0 else { return false }
        if probe.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return true }
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }

    /// Waits until the descriptor is ready for `events` or the deadline passes; false on the deadline.
    private static func waitFor(descriptor: Int32, events: Int16, until deadline: Deadline) -> Bool {
        while true {
            let remaining = deadline.remainingMilliseconds
            guard remaining > 0 else { return false }
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&entry, 1, Int32(clamping: remaining))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }  // let the next call report the error itself
        }
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code)).lowercasedFirstLetter
    }
}

/// A point in time a blocking operation must finish by, on the monotonic clock.
struct Deadline {
    let seconds: Double
    private let end: ContinuousClock.Instant

    init(seconds: Double) {
        self.seconds = seconds
        self.end = .now + .milliseconds(Int64((seconds * 1000).rounded()))
    }

    var remainingMilliseconds: Int64 {
        let left = ContinuousClock.now.duration(to: end).components
        return max(0, left.seconds * 1000 + left.attoseconds / 1_000_000_000_000_000)
    }
}

extension String {
    /// `Connection refused` becomes `connection refused`, the way our messages continue a sentence.
    var lowercasedFirstLetter: String {
        guard let first = first else { return self }
        return first.lowercased() + dropFirst()
    }
}
