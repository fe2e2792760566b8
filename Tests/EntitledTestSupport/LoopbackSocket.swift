import Foundation

/// A TCP socket connected to 127.0.0.1, for tests that speak to a server byte by byte.
public enum LoopbackSocket {
    /// The descriptor of a new socket connected to `port` (closed again if the connect fails); with
    /// `receiveTimeoutSeconds`, reads give up after that long.
    public static func connect(port: Int, receiveTimeoutSeconds: Int? = nil) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestSupportFailure(description: "socket: errno \(errno)") }
        if let seconds = receiveTimeoutSeconds {
            var timeout = timeval(tv_sec: seconds, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Foundation.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let failure = errno
            close(descriptor)
            throw TestSupportFailure(description: "connect to 127.0.0.1:\(port): errno \(failure)")
        }
        return descriptor
    }

    /// Sends `line` and a newline on `descriptor` and reads one answer line, byte by byte so that nothing
    /// after it is taken from the socket; what came before the end if the server closed, maybe nothing.
    public static func call(_ descriptor: Int32, _ line: String) throws -> String {
        _ = (line + "\n").withCString { send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        var answer: [UInt8] = []
        var byte: UInt8 = 0
        while recv(descriptor, &byte, 1, 0) == 1 {
            if byte == UInt8(ascii: "\n") { return String(decoding: answer, as: UTF8.self) }
            answer.append(byte)
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
