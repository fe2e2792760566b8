import EntitledClient
import EntitledCore
import EntitledTestSupport
import Foundation
import Logging
import Testing

@testable import EntitledServer
@testable import EntitledStorage

/// After a group commit of many connections, a loop holds the next commit until they are back, or until
/// the hold's deadline (`CommitHold`): a hold nobody ends must still end.
@Suite("Held commits", .serialized)
struct HeldCommitTests {
    @Test func aHeldCommitIsMadeAtItsDeadlineThoughTheConnectionsItWaitsForNeverWriteAgain() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let durable = try DurableStore(directory: data, policy: .always)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        // One loop, and no timeouts: nothing but the hold's own deadline wakes the loop while it holds.
        var configuration = ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0), eventLoops: 1)
        configuration.idleTimeoutSeconds = 0
        configuration.authenticationTimeoutSeconds = 0
        // A hold as long as twice the slowed sync below (a second), not the millisecond a server allows:
        // long enough that the write sent after it surely comes while it lasts.
        configuration.longestCommitHoldNanoseconds = 5_000_000_000
        let server = EntitledServer(processor: RequestProcessor(durable: durable), configuration: configuration, logger: logger)
        let port = try #require(try await server.start().first?.port)
        defer { durable.close() }

        var group: [EntitledAsyncConnection] = []
        for _ in 0..<10 { group.append(try await EntitledAsyncConnection.local(port: port)) }
        let lone = try await EntitledAsyncConnection.local(port: port)
        #expect(try await lone.send(line: #"{"op":"grant","user":"warm","product":"p"}"#).isOK)

        // A lone writer's commit is made on the loop's thread; slowed, it keeps the loop away while the
        // ten send theirs, which it then reads in one turn and commits as one group, handed to the log's
        // writer thread. That group's answer arms a hold for ten connections.
        let slow = FileSystem.Fault(operation: "fdatasync", directory: data, errno: 0, delayMilliseconds: 500)
        FileSystem.inject(slow)
        let first = Task { try await lone.send(line: #"{"op":"grant","user":"lone","product":"p"}"#) }
        while FileSystem.hits(of: slow) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let writes = group.enumerated().map { index, connection in
            Task { try await connection.send(line: #"{"op":"grant","user":"group\#(index)","product":"p"}"#) }
        }
        #expect(try await first.value.isOK)
        for write in writes { #expect(try await write.value.isOK) }
        FileSystem.remove(slow)

        // One write, from a connection not in the group, while none of the ten writes again: it waits for
        // the hold's deadline (about a second: the group's sync was slowed too), not forever. A raw socket, so that a loop that never wakes fails the test
        // (its read times out) instead of hanging it.
        let socket = try LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 10)
        defer { close(socket) }
        let request = Array(#"{"op":"grant","user":"after","product":"p"}"#.utf8) + [10]
        #expect(request.withUnsafeBytes { write(socket, $0.baseAddress, $0.count) } == request.count)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !answer.contains(10) {
            let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            answer += buffer[0..<count]
        }
        let line = String(decoding: answer, as: UTF8.self)
        #expect(line.hasPrefix(#"{"ok":true"#), "no answer within 10 s: \(line)")
        await server.stop()
    }
}
