import CEpoll
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A bound, listening, non-blocking socket: TCP or a Unix domain socket.
final class ListeningSocket: @unchecked Sendable {
    let descriptor: Int32
    let kind: ConnectionKind
    /// The address actually bound (port 0 resolved).
    let address: SocketAddress
    private var isClosed = false

    private init(descriptor: Int32, kind: ConnectionKind, address: SocketAddress) {
        self.descriptor = descriptor
        self.kind = kind
        self.address = address
    }

    /// Binds `host:port` (a name is resolved; the first address that binds wins) and listens.
    static func tcp(host: String, port: Int, backlog: Int32) throws(SocketError) -> ListeningSocket {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &results)
        guard status == 0, let first = results else {
            throw SocketError(operation: "resolve \(host)", message: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(first) }
        var lastError = SocketError(operation: "bind", message: "no address")
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            let descriptor = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else {
                lastError = SocketError(operation: "socket")
                continue
            }
            var on: Int32 = 1
            _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            guard bind(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
                lastError = SocketError(operation: "bind")
                Glibc.close(descriptor)
                continue
            }
            guard Glibc.listen(descriptor, backlog) == 0 else {
                lastError = SocketError(operation: "listen")
                Glibc.close(descriptor)
                continue
            }
            do {
                let address = try SocketAddress.boundAddress(of: descriptor)
                return ListeningSocket(descriptor: descriptor, kind: .tcp, address: address)
            } catch {
                lastError = error
                Glibc.close(descriptor)
            }
        }
        throw lastError
    }

    /// Binds a Unix domain socket at `path` (which must not exist), gives the file `mode`, and listens.
    static func unix(path: String, mode: mode_t, backlog: Int32) throws(SocketError) -> ListeningSocket {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            throw SocketError(operation: "bind", message: "the path is longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SocketError(operation: "socket") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let error = SocketError(operation: "bind")
            Glibc.close(descriptor)
            throw error
        }
        // Before `listen`: until then nobody can connect, so there is no moment with the umask's mode.
        guard chmod(path, mode) == 0 else {
            let error = SocketError(operation: "chmod")
            Glibc.close(descriptor)
            unlink(path)
            throw error
        }
        guard Glibc.listen(descriptor, backlog) == 0 else {
            let error = SocketError(operation: "listen")
            Glibc.close(descriptor)
            throw error
        }
        do {
            return ListeningSocket(descriptor: descriptor, kind: .unix, address: try SocketAddress(unixDomainSocketPath: path))
        } catch {
            Glibc.close(descriptor)
            throw SocketError(operation: "bind", message: "\(error)")
        }
    }

    /// Whether a server accepts connections on the Unix socket at `path` right now.
    static func isAccepting(unixSocketPath path: String) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { Glibc.close(descriptor) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    /// Closes the socket (once; the server and the loop may both try).
    func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(descriptor)
    }
}

extension SocketAddress {
    /// The local address a socket is bound to.
    static func boundAddress(of descriptor: Int32) throws(SocketError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard status == 0 else { throw SocketError(operation: "getsockname") }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let named = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
            }
        }
        guard named == 0 else { throw SocketError(operation: "getnameinfo", message: String(cString: gai_strerror(named))) }
        let port: Int
        switch Int32(storage.ss_family) {
        case AF_INET:
            port = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) } }
        case AF_INET6:
            port = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) } }
        default:
            throw SocketError(operation: "getsockname", message: "not an internet address")
        }
        do {
            return try SocketAddress(ipAddress: String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), port: port)
        } catch {
            throw SocketError(operation: "getsockname", message: "\(error)")
        }
    }
}
