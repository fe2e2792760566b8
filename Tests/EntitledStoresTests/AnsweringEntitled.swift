import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for `entitled` on 127.0.0.1 that answers every request with one error code, as the real
/// server words it (PROTOCOL.md, Errors: `{"ok":false,"id":…,"error":{"code":…,"message":…}}`): for tests of
/// what the receiver tells a store when `entitled` answers something no store notification can cause
/// (`loading` while it starts, `internal`, `outcome_unknown`, `stale`), which no real server can be made to
/// answer on demand. Each connection is served on a thread of its own, line by line.
final class AnsweringEntitled: @unchecked Sendable {
    let port: Int
    private let descriptor: Int32
    private let code: String
    private let lock = NSLock()
    private var requests: [String] = []

    init(answering code: String) throws {
        self.code = code
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, 16) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard descriptor >= 0, bound else { throw CocoaError(.fileWriteUnknown) }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptForever() }
    }

    deinit {
        shutdown(descriptor, Int32(SHUT_RDWR))
        Glibc.close(descriptor)
    }

    /// The operations asked so far, in order.
    var operations: [String] { lock.withLock { requests } }

    private func acceptForever() {
        while true {
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { return }
            Thread.detachNewThread { [self] in serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        defer { Glibc.close(connection) }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            pending += buffer[0..<count]
            while let end = pending.firstIndex(of: 10) {
                let line = Data(pending[..<end])
                pending.removeSubrange(...end)
                let request = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] ?? [:]
                lock.withLock { requests.append(request["op"] as? String ?? "?") }
                var answer: [String: Any] = ["ok": false, "error": ["code": code, "message": "the stand-in answers \(code)"]]
                if let id = request["id"] { answer["id"] = id }
                var bytes = [UInt8]((try? JSONSerialization.data(withJSONObject: answer)) ?? Data())
                bytes.append(10)
                guard write(connection, bytes, bytes.count) == bytes.count else { return }
            }
        }
    }
}
