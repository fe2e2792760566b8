import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// How a node learns what the others committed: by PostgreSQL's notifications while it is idle, by its
/// own commits while it commits back to back (it stops listening then), and never by polling in a loop.
extension ClusterTests {
    @Suite("Following the other nodes")
    struct Following {
        @Test func aNodeCommittingBackToBackStopsListeningFollowsByItsCommitsAndListensAgainWhenIdle() throws {
            let url = try freshDatabase(on: SharedPostgres.server())
            let busy = try ClusterNode(name: "busy", url: url)
            let other = try ClusterNode(name: "other", url: url)
            try busy.ok(#"{"op":"define","entitlement":"pro","products":["p1"]}"#)
            #expect(try replication(of: busy)["listening"]?.boolValue == true, "a new node listens")

            // Writers that send their next grant as soon as the last is answered: groups back to back.
            let writing = Tally()
            let done = DispatchGroup()
            let stop = Flag()
            for writer in 0..<6 {
                DispatchQueue.global().async(group: done) {
                    do {
                        let connection = try busy.connect()
                        defer { connection.close() }
                        var count = 0
                        while !stop.isSet, count < 5_000 {
                            writing.note(try connection.send(line: #"{"op":"grant","user":"w\#(writer)-\#(count)","product":"p1","duration":"30d"}"#))
                            count += 1
                        }
                    } catch {
                        writing.fail("writer \(writer): \(error)")
                    }
                }
            }
            let wentQuiet = try eventually(20) { try replication(of: busy)["listening"]?.boolValue == false }
            let during = try replication(of: busy)
            #expect(wentQuiet, "the busy node never stopped listening: \(during)")

            // While it does not listen, what another node commits reaches it with its own next commit.
            let elsewhere = try other.ok(#"{"op":"grant","user":"elsewhere","product":"p1","duration":"30d"}"#)
            let seq = try #require(elsewhere.sequence)
            let read = try busy.send(#"{"op":"check","user":"elsewhere","entitlement":"pro","minSeq":\#(seq)}"#)
            #expect(read["active"]?.boolValue == true, "\(read.line)")

            stop.set()
            done.wait()
            #expect(writing.withLock { $0.failures }.isEmpty, "\(writing.withLock { $0.failures }.prefix(3))")

            // Idle again, it listens: a quiet node would read the change table every 2 ms instead.
            // Generous deadlines here and below: the node may be slow to get its turn on a busy machine.
            let listensAgain = try eventually(30) { try replication(of: busy)["listening"]?.boolValue == true }
            let idle = try replication(of: busy)
            #expect(listensAgain, "the node did not listen again once idle: \(idle)")
            let before = try #require(try replication(of: busy)["catchUps"]?.intValue)
            Thread.sleep(forTimeInterval: 0.5)
            let after = try #require(try replication(of: busy)["catchUps"]?.intValue)
            #expect(after - before <= 2, "an idle node read the changes \(after - before) times in 0.5 s")

            // And the notification brings it the others' changes without a read of its own.
            let later = try other.ok(#"{"op":"grant","user":"later","product":"p1","duration":"30d"}"#)
            let laterSeq = try #require(later.sequence)
            let applied = try eventually(30) { (try replication(of: busy)["appliedSequence"]?.intValue ?? 0) >= laterSeq }
            #expect(applied)
        }

        private func replication(of node: ClusterNode) throws -> JSONValue {
            let stats = try node.ok(#"{"op":"stats"}"#)
            return try #require(stats["replication"], "\(stats.line)")
        }
    }
}

/// A flag set once, read by other threads.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
