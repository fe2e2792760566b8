import EntitledClient
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension ClusterNode {
    /// Sends `lines` in one write on a new connection and reads as many answers, in order: what a client
    /// that pipelines does (the blocking client waits for each answer).
    func pipeline(_ lines: [String], timeoutSeconds: Int = 15) throws -> [EntitledResponse] {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw PipelineFailure(description: "cannot connect to \(name): errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
        guard bytes.withUnsafeBytes({ Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            throw PipelineFailure(description: "cannot send to \(name)")
        }
        var received: [UInt8] = []
        var answers: [EntitledResponse] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while answers.count < lines.count {
            if let newline = received.firstIndex(of: UInt8(ascii: "\n")) {
                answers.append(try EntitledResponse(line: String(decoding: received[..<newline], as: UTF8.self)))
                received.removeSubrange(...newline)
                continue
            }
            let count = recv(descriptor, &chunk, chunk.count, 0)
            guard count > 0 else { throw PipelineFailure(description: "\(name) answered \(answers.count) of \(lines.count) lines") }
            received += chunk[..<count]
        }
        return answers
    }
}

struct PipelineFailure: Error, CustomStringConvertible {
    let description: String
}
