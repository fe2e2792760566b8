import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// PostgreSQL fails over under a running cluster: a primary and a streaming standby made with
/// `pg_basebackup -R` (its replication link through a proxy the test cuts), the nodes reaching the database
/// through a proxy that is re-pointed at the standby once it is promoted. Protocol/CLUSTER.md, "After a
/// failover".
extension ClusterTests {
    @Suite("A failover of the database under the cluster")
    struct Failover {
        /// A primary, its standby behind a cut-able link, and the proxy the nodes connect through.
        struct Rig {
            let primary: PostgresServer
            let standby: PostgresServer
            /// The standby's replication link to the primary.
            let link: FaultProxy
            /// Where the nodes connect: the primary, then the promoted standby.
            let router: FaultProxy
            /// The nodes' URL (through `router`).
            let url: String
            /// The database's URL on the standby, straight.
            let standbyURL: String

            /// - Parameter synchronous: the primary waits for the standby at each commit
            ///   (`synchronous_standby_names = '*'`, set once the standby runs: before, a commit would wait for
            ///   a standby that does not exist yet).
            init(synchronous: Bool = false) throws {
                primary = try PostgresServer()
                let database = "failover"
                try primary.createDatabase(database)
                link = try FaultProxy(targetPort: primary.port)
                standby = try PostgresServer(standbyOf: primary, through: link.port)
                if synchronous {
                    try primary.psql("ALTER SYSTEM SET synchronous_standby_names = '*'")
                    try primary.psql("SELECT pg_reload_conf()")
                    try standby.waitUntilReplayed(from: primary)
                }
                router = try FaultProxy(targetPort: primary.port)
                url = router.proxied(primary.url(database: database), databasePort: primary.port)
                standbyURL = standby.url(database: database)
            }

            /// The primary dies; the standby is promoted; the nodes' proxy points at it.
            func failOver() throws {
                primary.kill()
                try standby.promote()
                try router.retarget(port: standby.port)
            }

            /// A number from the promoted standby's tables.
            func count(_ sql: String) throws -> Int {
                Int(try standby.psql(sql, url: standbyURL).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            }

            func close() {
                primary.close()
                standby.close()
            }
        }

        static let nodeArguments = ["--write-timeout", "3"]

        /// Sends `line` to `node` until it is answered `ok` (a node reconnecting after the failover refuses
        /// writes meanwhile), for up to `seconds`; every answer must come within the write timeout and a
        /// margin. Returns the `ok` answer and every answer before it.
        static func untilOK(_ line: String, on node: ClusterNode, seconds: Double = 30) throws -> (answer: EntitledResponse?, refusals: [String]) {
            var refusals: [String] = []
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                let sent = Date()
                let answer = try node.send(line)
                let took = Date().timeIntervalSince(sent)
                #expect(took < 3 + 1.5, "\(node.name) answered after \(took) s (--write-timeout 3): \(answer.line)")
                if answer.isOK { return (answer, refusals) }
                refusals.append(answer.line)
                Thread.sleep(forTimeInterval: 0.2)
            }
            return (nil, refusals)
        }

        static func replication(of node: ClusterNode) throws -> JSONValue? {
            try node.ok(#"{"op":"stats"}"#)["replication"]
        }

        /// The issue's first sequence: an asynchronous standby, cut off from the primary for the last 10 of 30
        /// acknowledged grants, is promoted. The nodes must notice that the database's history is not the one
        /// they applied, stop serving what it lost, reload, and go on taking writes, numbered so that no
        /// number ever names two changes; and no snapshot may claim more than the database holds.
        @Test func anAsynchronousStandbyPromotedBehindTheNodesIsNoticedAndNoNumberNamesTwoChanges() throws {
            let rig = try Rig()
            defer { rig.close() }
            let n1 = try ClusterNode(name: "n1", url: rig.url, arguments: Self.nodeArguments)
            let n2 = try ClusterNode(name: "n2", url: rig.url, arguments: Self.nodeArguments)
            for index in 0..<20 { try n1.ok(#"{"op":"grant","user":"alice","product":"kept-\#(index)"}"#) }
            try rig.standby.waitUntilReplayed(from: rig.primary)
            try rig.link.partition()
            var lostNumbers: [UInt64] = []
            for index in 0..<10 {
                let grant = try n1.ok(#"{"op":"grant","user":"alice","product":"lost-\#(index)"}"#)
                lostNumbers.append(try #require(grant.sequence))
            }
            #expect(lostNumbers == Array(21...30))
            // Both nodes applied (and served) what the standby never received.
            #expect(try n2.ok(#"{"op":"check","user":"alice","product":"lost-9","minSeq":30}"#)["active"]?.boolValue == true)

            try rig.failOver()

            // Writes go on: answered within the write timeout, numbered beyond every number given before.
            let (after, refusals) = try Self.untilOK(#"{"op":"grant","user":"bob","product":"after","idempotencyKey":"bob-1"}"#, on: n1)
            let afterSequence = try #require(after?.sequence, "no grant was acknowledged after the failover: \(refusals)")
            #expect(afterSequence > 30, "the grant after the failover is numbered \(afterSequence), a number given to a lost change")
            let (other, _) = try Self.untilOK(#"{"op":"grant","user":"carol","product":"after"}"#, on: n2)
            let otherSequence = try #require(other?.sequence)
            #expect(otherSequence > afterSequence)
            // No number names two changes: none of 21-30 is in the new history.
            #expect(try rig.count("SELECT count(*) FROM entitled.changes WHERE seq BETWEEN 21 AND 30") == 0)

            for node in [n1, n2] {
                // What the database lost is not served; what it holds is.
                let memberships = try node.ok(#"{"op":"memberships","user":"alice","limit":100,"minSeq":\#(otherSequence)}"#).memberships ?? []
                #expect(memberships.count == 20, "\(node.name) serves \(memberships.count) of alice's memberships")
                #expect(memberships.allSatisfy { $0.productId.hasPrefix("kept-") })
                #expect(try node.ok(#"{"op":"check","user":"bob","product":"after","minSeq":\#(otherSequence)}"#)["active"]?.boolValue == true)
                // And it says so: monitoring sees the divergence and the new timeline.
                let replication = try Self.replication(of: node)
                #expect(replication?["divergences"]?.intValue ?? 0 >= 1, "\(node.name): \(String(describing: replication))")
                #expect(replication?["lastDivergence"]?.stringValue != nil)
                #expect(replication?["database"]?.stringValue?.hasSuffix("timeline 2") == true, "\(String(describing: replication))")
                #expect(replication?["connected"]?.boolValue == true)
                #expect(replication?["withholdingReads"]?.boolValue == false)
                #expect(UInt64(replication?["appliedSequence"]?.intValue ?? 0) >= otherSequence)
            }

            // A snapshot claims no more than the database holds, and a fresh node started from it serves the
            // database's history.
            try n1.ok(#"{"op":"snapshot"}"#)
            #expect(try rig.count("SELECT count(*) FROM entitled.snapshots WHERE seq > (SELECT seq FROM entitled.head)") == 0)
            #expect(try rig.count("SELECT count(*) FROM entitled.snapshots") == 1)
            let fresh = try ClusterNode(name: "n3", url: rig.url, arguments: Self.nodeArguments)
            let seen = try fresh.ok(#"{"op":"memberships","user":"alice","limit":100,"minSeq":\#(otherSequence)}"#).memberships ?? []
            #expect(seen.count == 20 && seen.allSatisfy { $0.productId.hasPrefix("kept-") }, "a fresh node serves \(seen.map(\.productId))")
            #expect(try fresh.ok(#"{"op":"check","user":"carol","product":"after"}"#)["active"]?.boolValue == true)
            // The retried key replays the grant made after the failover.
            let replay = try n2.ok(#"{"op":"grant","user":"bob","product":"after","idempotencyKey":"bob-1"}"#)
            #expect(replay.isIdempotentReplay && replay.membership?.id == after?.membership?.id, "\(replay.line)")
        }

        /// The issue's second sequence: with a synchronous standby cut off, a grant's commit waits for it and
        /// is answered `outcome_unknown`. Its transaction's wait for the standby is then cancelled (its session
        /// terminated, as a node learning its fate or an operator does): PostgreSQL shows the commit on the
        /// primary alone. No node may serve it or acknowledge it, since the failover that follows loses it.
        @Test func aCommitTheSynchronousStandbyNeverConfirmedIsNeitherServedNorAcknowledged() throws {
            let rig = try Rig(synchronous: true)
            defer { rig.close() }
            let n1 = try ClusterNode(name: "n1", url: rig.url, arguments: Self.nodeArguments)
            let n2 = try ClusterNode(name: "n2", url: rig.url, arguments: Self.nodeArguments)
            try n1.ok(#"{"op":"grant","user":"before","product":"p1"}"#)
            try rig.link.partition()

            let started = Date()
            let grant = try n1.send(#"{"op":"grant","user":"gina","product":"p1","idempotencyKey":"gina-1"}"#)
            #expect(grant.error?.code == .outcomeUnknown, "\(grant.line)")
            #expect(Date().timeIntervalSince(started) < 3 + 1.5)
            // The commit waits for the standby; ending its session cancels the wait, and the primary shows it.
            try rig.primary.terminateConnections(database: "failover")
            Thread.sleep(forTimeInterval: 3)
            #expect(try rig.primary.psql("SELECT count(*) FROM entitled.changes", database: "failover") == "2")

            // Neither node serves it, and the documented retry is not acknowledged.
            for node in [n1, n2] {
                #expect(try node.send(#"{"op":"check","user":"gina","product":"p1"}"#)["active"]?.boolValue != true, "\(node.name) serves gina")
            }
            let retry = try n1.send(#"{"op":"grant","user":"gina","product":"p1","idempotencyKey":"gina-1"}"#)
            #expect(!retry.isOK, "the retry was acknowledged: \(retry.line)")

            try rig.failOver()

            // After the failover the grant is gone; the retry makes it, once, and every node serves it.
            #expect(try rig.count("SELECT count(*) FROM entitled.changes WHERE seq = 2") == 0)
            let (made, refusals) = try Self.untilOK(#"{"op":"grant","user":"gina","product":"p1","idempotencyKey":"gina-1"}"#, on: n1)
            let seq = try #require(made?.sequence, "the retry was never acknowledged: \(refusals)")
            #expect(made?.isIdempotentReplay == false)
            for node in [n1, n2] {
                #expect(try node.ok(#"{"op":"memberships","user":"gina","minSeq":\#(seq)}"#).memberships?.count == 1)
                #expect(try node.ok(#"{"op":"check","user":"before","product":"p1"}"#)["active"]?.boolValue == true)
            }
        }
    }
}
