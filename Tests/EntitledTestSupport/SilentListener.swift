import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP port on 127.0.0.1, held until the value is released. Listening, it takes connections (the kernel
/// completes them from the backlog) and never answers: a peer that leaves a client's TLS handshake hanging,
/// or a port "already in use" for a server. Bound but not listening, connections to it are refused, and no
/// other test's server can pick the port meanwhile (a port closed at once could be).
public final class SilentListener {
    public let port: Int
    private let descriptor: Int32

    public init(listening: Bool = true) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestSupportFailure(description: "socket() failed: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && (!listening || listen(descriptor, 16) == 0)
                    && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(descriptor)
            throw TestSupportFailure(description: "cannot listen on 127.0.0.1: errno \(errno)")
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        Glibc.close(descriptor)
    }
}
