import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Clients that pipeline requests with large answers and never read them, against a real `entitled`:
/// the answers held for them stay near the documented 64 KiB a connection, because the bound is checked
/// after each answer, not only between turns (before, the 256 answers of one turn were all kept: ten such
/// clients held 107 MB more here, against a bound of 28 MB).
@Suite struct UnreadAnswersMemoryTests {
    @Test func answersNobodyReadsStayNearTheOutputLimitPerConnection() throws {
        let server = try RunningEntitled()
        let client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port))
        try client.connect()
        // One user with 300 memberships: a `memberships` answer of about 100 KB.
        for index in 0..<300 {
            let answer = try client.send(line: #"{"op":"grant","user":"big","product":"p\#(index)","duration":"30d"}"#)
            #expect(answer.isOK)
        }
        let answerBytes = try client.send(line: #"{"op":"memberships","user":"big","limit":300}"#).line.utf8.count
        #expect(answerBytes > 64 * 1024)
        let before = try Self.residentBytes(of: server.processIdentifier)

        let connections = 10
        let line = #"{"op":"memberships","user":"big","limit":300}"# + "\n"
        var sockets: [RawSocket] = []
        for _ in 0..<connections {
            let socket = try RawSocket(port: server.port, receiveBufferSize: 4096)
            try socket.send(String(repeating: line, count: 256))
            sockets.append(socket)
        }
        // Every connection's first turn has run once a new client is answered after them.
        Thread.sleep(forTimeInterval: 1)
        #expect(try client.send(line: #"{"op":"ping"}"#).isOK)
        let grown = try Self.residentBytes(of: server.processIdentifier) - before
        // Per connection: the 64 KiB limit, one answer past it, and what the kernel's buffers did not take.
        let bound = connections * (64 * 1024 + 2 * answerBytes) + 24 * 1024 * 1024
        #expect(grown < bound, "\(connections) connections that read nothing grew the server by \(grown / 1024) KiB (answer \(answerBytes) bytes)")
        withExtendedLifetime(sockets) {}
    }

    static func residentBytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw RawSocket.Failure(description: "no VmRSS in /proc/\(pid)/status") }
        return kilobytes * 1024
    }
}
