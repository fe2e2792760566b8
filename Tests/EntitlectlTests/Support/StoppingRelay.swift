import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay on 127.0.0.1 between `entitlectl` and a real server that stops the conversation right
/// after passing on the first answer whose line contains a marker (an export's first page, say): it
/// kills the server (SIGKILL, as a crash would), or holds every later request unanswered (a server that
/// hangs). A failure at a chosen point, the same on every run, where killing the server from the test at
/// some moment would race the console.
///
/// It takes one connection, relays it line by line (a request, then its answer), and then stops
/// listening, so the console's attempt to reconnect is refused.
final class StoppingRelay: @unchecked Sendable {
    /// What happens after the marked answer.
    enum Fault: Sendable {
        /// The server process is killed; the next request finds its connection closed.
        case killServer(processIdentifier: Int32)
        /// Nothing more is passed on, either way, until the console closes the connection.
        case hold
    }

    let port: Int
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)
    private let markerPassed = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - serverPort: where the server listens.
    ///   - marker: text of the answer line after which `fault` happens.
    init(serverPort: Int, after marker: String, _ fault: Fault) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, pointer, &length) == 0
            }
        }
        guard listener >= 0, listening else { throw RelayFailure("cannot listen on 127.0.0.1: errno \(errno)") }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in
            relay(to: serverPort, after: marker, fault)
            done.signal()
        }
    }

    /// Waits until the relayed connection has ended.
    func waitUntilDone() { done.wait() }

    /// Waits (at most `seconds`) until the marked answer was passed on; whether it was.
    func waitUntilMarkerPassed(seconds: Int = 30) -> Bool {
        markerPassed.wait(timeout: .now() + .seconds(seconds)) == .success
    }

    private func relay(to serverPort: Int, after marker: String, _ fault: Fault) {
        let client = accept(listener, nil, nil)
        // One connection only: a reconnection is refused, as a server that is gone refuses it.
        close(listener)
        guard client >= 0 else { return }
        defer { close(client) }
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(server) }
        var address = Self.loopback(port: serverPort)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { return }
        var fromClient = LineReader(descriptor: client)
        var fromServer = LineReader(descriptor: server)
        while let request = fromClient.nextLine(), Self.send(request, to: server), let answer = fromServer.nextLine() {
            guard Self.send(answer, to: client) else { return }
            guard String(decoding: answer, as: UTF8.self).contains(marker) else { continue }
            switch fault {
            case .killServer(let process):
                kill(process, SIGKILL)
                // Dead (a zombie until the test reaps it) before the console's next request is passed on,
                // so no answer can come to it: the server's end closes, and so is the console's below.
                Self.waitUntilDead(process)
                markerPassed.signal()
            case .hold:
                markerPassed.signal()
                while fromClient.nextLine() != nil {}
                return
            }
        }
    }

    /// Waits (at most 10 s) until `/proc` shows the process as a zombie or gone.
    private static func waitUntilDead(_ process: Int32) {
        for _ in 0..<1000 {
            // The state is the field after the command's parenthesized name: `123 (entitled) Z ...`.
            let stat = ProcFile.text("/proc/\(process)/stat")
            guard let close = stat.lastIndex(of: ")") else { return }
            let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
            if state == "Z" || state == "X" { return }
            usleep(10_000)
        }
    }

    private static func send(_ line: [UInt8], to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < line.count {
            let sent = line[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}

/// Reads whole lines (with their newline) from a socket.
private struct LineReader {
    let descriptor: Int32
    private var buffer: [UInt8] = []

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The next line, newline included; `nil` once the peer closed or the read failed.
    mutating func nextLine() -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                defer { buffer.removeSubrange(...newline) }
                return Array(buffer[...newline])
            }
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }
}

struct RelayFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
