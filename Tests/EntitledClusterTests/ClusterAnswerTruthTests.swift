import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// The two promises a fault must not break, each made to fail on purpose by a proxy between one node and
/// PostgreSQL at the exact moment of its group's COMMIT: an answer that says "not changed" is true, and a
/// node never serves a change that was not committed.
extension ClusterTests {
    @Suite("Cluster answers stay true under a fault at COMMIT")
    struct AnswerTruth {
        /// A node behind a fault proxy, and a witness connected straight to the database.
        struct Rig {
            let server: PostgresServer
            let databaseURL: String
            let proxy: FaultProxy
            let node: ClusterNode
            let witness: ClusterNode

            init(nodeArguments: [String] = []) throws {
                server = try SharedPostgres.server()
                databaseURL = try freshDatabase(on: server)
                proxy = try FaultProxy(targetPort: server.port)
                node = try ClusterNode(name: "faulty", url: proxy.proxied(databaseURL, databasePort: server.port), arguments: nodeArguments)
                witness = try ClusterNode(name: "witness", url: databaseURL)
                try node.ok(#"{"op":"grant","user":"warm-up","product":"p1"}"#)
            }

            /// How many memberships the database holds for `user`, read by the witness once it has caught
            /// up with everything committed so far.
            func committedMemberships(of user: String) throws -> Int {
                let head = try server.psql("SELECT seq FROM entitled.head", url: databaseURL).trimmingCharacters(in: .whitespacesAndNewlines)
                return try witness.ok(#"{"op":"memberships","user":"\#(user)","minSeq":\#(Int(head) ?? 0)}"#).memberships?.count ?? -1
            }
        }

        /// What a write's answer claims about its change.
        enum Claim: Equatable {
            case applied, notApplied, unknown
        }

        static func claim(of answer: EntitledResponse) -> Claim {
            if answer.isOK { return .applied }
            // Before the code of its own, an unknown outcome was `unavailable` saying so in its message.
            if answer.error?.code == .outcomeUnknown || answer.error?.message.contains("may have been made") == true { return .unknown }
            return .notApplied
        }

        /// The node's connection is reset while its COMMIT is still on its way: PostgreSQL commits it a
        /// moment later. A node that decides "not committed" from a look on a new connection (while the old
        /// backend can still commit) answers "nothing was changed" for a committed write.
        @Test func aCommitThatReachesTheDatabaseAfterTheNodeLostItsConnectionIsNeverAnsweredAsNotChanged() throws {
            let rig = try Rig()
            try rig.proxy.arm("split", seconds: 1.5)
            let answer = try rig.node.send(#"{"op":"grant","user":"split-1","product":"p1"}"#)
            #expect(try rig.proxy.waitFired(seconds: 10), "the proxy never saw the COMMIT")
            // Past the moment the held COMMIT reaches the database (or can no longer reach it).
            Thread.sleep(forTimeInterval: 2.5)
            let committed = try rig.committedMemberships(of: "split-1")
            switch Self.claim(of: answer) {
            case .applied: #expect(committed == 1, "answered ok, but the database holds \(committed): \(answer.line)")
            case .notApplied: #expect(committed == 0, "answered that nothing changed, but the change is committed: \(answer.line)")
            case .unknown: #expect(committed <= 1)
            }
            // Whatever the answer, the node itself agrees with the database afterwards.
            #expect(try eventually(10) {
                try rig.node.send(#"{"op":"memberships","user":"split-1"}"#).memberships?.count == committed
            })
        }

        /// The COMMIT held past the write timeout, then delivered: the writer must not have been told the
        /// write was not made.
        @Test func aCommitHeldPastTheWriteTimeoutIsNeverAnsweredAsNotChanged() throws {
            let rig = try Rig(nodeArguments: ["--write-timeout", "1"])
            try rig.proxy.arm("hold", seconds: 2)
            let answer = try rig.node.send(#"{"op":"grant","user":"held-1","product":"p1"}"#)
            #expect(try rig.proxy.waitFired(seconds: 10), "the proxy never saw the COMMIT")
            Thread.sleep(forTimeInterval: 2.5)
            let committed = try rig.committedMemberships(of: "held-1")
            switch Self.claim(of: answer) {
            case .applied: #expect(committed == 1, "answered ok, but the database holds \(committed): \(answer.line)")
            case .notApplied: #expect(committed == 0, "answered that nothing changed, but the change is committed: \(answer.line)")
            case .unknown: #expect(committed <= 1)
            }
        }

        /// A group whose COMMIT never reached the database, on a node cut off from it: the node must not
        /// serve the change, nor count its number as applied while another node commits a different change
        /// under that number.
        @Test func aNodeWhoseCommitFailedNeitherServesTheChangeNorCountsItsNumber() throws {
            let rig = try Rig()
            // The COMMIT is dropped and the node cannot reconnect: it stays cut off until healed.
            try rig.proxy.arm("isolate")
            defer { try? rig.proxy.heal() }
            let dropped = Thread { _ = try? rig.node.send(#"{"op":"grant","user":"uncommitted","product":"p1"}"#) }
            dropped.start()
            #expect(try rig.proxy.waitFired(seconds: 5), "the proxy never saw the COMMIT")
            // Another node commits a different change under the number the failed group had taken.
            let other = try rig.witness.ok(#"{"op":"grant","user":"committed-elsewhere","product":"p1"}"#)
            let seq = try #require(other.sequence)
            let connection = try rig.node.connect()
            defer { connection.close() }
            let uncommitted = try connection.send(line: #"{"op":"check","user":"uncommitted","product":"p1"}"#)
            #expect(uncommitted["active"]?.boolValue == false, "the node serves a change that was never committed: \(uncommitted.line)")
            // Read-your-writes: the node either has change `seq` (the other node's) or says it is stale.
            let read = try connection.send(line: #"{"op":"check","user":"committed-elsewhere","product":"p1","minSeq":\#(seq)}"#)
            #expect(read["active"]?.boolValue == true || read.error?.code == .stale, "minSeq \(seq) answered without that change: \(read.line)")
            let stats = try connection.send(line: #"{"op":"stats"}"#)
            let applied = stats["replication"]?["appliedSequence"]?.intValue ?? 0
            #expect(applied < seq, "the node counts change \(seq) as applied, but never saw it: \(stats.line)")
            try rig.proxy.heal()
            // Healed, it catches up with what was committed, and only that.
            #expect(try eventually(15) {
                try connection.send(line: #"{"op":"check","user":"committed-elsewhere","product":"p1"}"#)["active"]?.boolValue == true
            })
            #expect(try connection.send(line: #"{"op":"check","user":"uncommitted","product":"p1"}"#)["active"]?.boolValue == false)
        }
    }
}
