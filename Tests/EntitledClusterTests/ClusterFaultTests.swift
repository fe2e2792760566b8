import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Real faults under a real cluster: a node killed with SIGKILL, the database stopped and started, a
/// connection cut while its COMMIT is in flight, a node's connection terminated by the database.
extension ClusterTests {
    @Suite("Cluster faults")
    struct Fault {
    /// Grants `count` memberships for `prefix`-N users through `node`, one connection, returns the users
    /// whose grant was acknowledged and the highest change number seen.
    /// `acknowledged`, when given, is told of each acknowledged grant as it comes.
    static func grants(
        _ prefix: String, count: Int, through node: ClusterNode, acknowledged: (@Sendable () -> Void)? = nil
    ) -> (users: [String], seq: Int) {
        var users: [String] = []
        var seq = 0
        guard let connection = try? node.connect(timeout: 15) else { return ([], 0) }
        defer { connection.close() }
        for index in 0..<count {
            let user = "\(prefix)-\(index)"
            guard let answer = try? connection.send(line: #"{"op":"grant","user":"\#(user)","product":"p1","idempotencyKey":"\#(user)"}"#) else { break }
            if answer.isOK {
                users.append(user)
                seq = max(seq, Int(answer.sequence ?? 0))
                acknowledged?()
            }
        }
        return (users, seq)
    }

    @Test func aNodeKilledMidLoadLosesNothingItAcknowledgedAndTheOthersKeepServing() throws {
        let url = try freshDatabase(on: SharedPostgres.server())
        let victim = try ClusterNode(name: "victim", url: url)
        let survivor = try ClusterNode(name: "survivor", url: url)
        let tally = Tally()
        let firstAcknowledged = DispatchSemaphore(value: 0)
        let loader = Thread {
            let (users, seq) = Self.grants("k", count: 400, through: victim, acknowledged: { firstAcknowledged.signal() })
            tally.acknowledged(users, seq: seq)
        }
        loader.start()
        Thread.sleep(forTimeInterval: 0.7)
        // And until a first grant is acknowledged: on a loaded machine the loader may not have had one by now.
        _ = firstAcknowledged.wait(timeout: .now() + 30)
        victim.kill9()
        while !loader.isFinished { Thread.sleep(forTimeInterval: 0.05) }
        let (users, seq) = tally.withLock { ($0.users, $0.highest) }
        #expect(users.count > 0, "the load made no write before the kill")
        // The survivor answers, and holds every acknowledged grant.
        for user in users {
            let check = try survivor.ok(#"{"op":"check","user":"\#(user)","product":"p1","minSeq":\#(seq)}"#)
            #expect(check["active"]?.boolValue == true, "\(user) lost: \(check.line)")
        }
        try survivor.ok(#"{"op":"grant","user":"after-kill","product":"p1"}"#)
        // Restarted, the victim catches up on everything, its own and the survivor's.
        try victim.start()
        for user in users + ["after-kill"] {
            #expect(try victim.ok(#"{"op":"check","user":"\#(user)","product":"p1"}"#)["active"]?.boolValue == true, "\(user)")
        }
    }

    @Test func whileTheDatabaseIsDownChecksAnswerAndWritesAreRefusedThenEverythingResumes() throws {
        let server = try PostgresServer()
        defer { server.close() }
        let url = try freshDatabase(on: server)
        let node = try ClusterNode(name: "n1", url: url)
        let other = try ClusterNode(name: "n2", url: url)
        let before = Self.grants("before", count: 30, through: node)
        #expect(before.users.count == 30)

        try server.stop()
        let connection = try node.connect()
        defer { connection.close() }
        // Checks still answer from memory.
        #expect(try connection.send(line: #"{"op":"check","user":"before-3","product":"p1"}"#)["active"]?.boolValue == true)
        // A write is refused with `unavailable` within the write timeout, never a false ok.
        let started = Date()
        let refused = try connection.send(line: #"{"op":"grant","user":"during","product":"p1","idempotencyKey":"during"}"#)
        #expect(refused.error?.code == .unavailable, "\(refused.line)")
        #expect(Date().timeIntervalSince(started) < 8)
        #expect(try connection.send(line: #"{"op":"check","user":"during","product":"p1"}"#)["active"]?.boolValue == false)
        let stats = try connection.send(line: #"{"op":"stats"}"#)
        #expect(stats.line.contains(#""connected":false"#), "\(stats.line)")

        try server.start()
        // The node reconnects by itself; writes resume.
        #expect(try eventually(20) { try connection.send(line: #"{"op":"grant","user":"after","product":"p1"}"#).isOK })
        let after = try connection.send(line: #"{"op":"grant","user":"after2","product":"p1"}"#)
        #expect(after.isOK, "\(after.line)")
        for user in before.users + ["after2"] {
            #expect(try other.ok(#"{"op":"check","user":"\#(user)","product":"p1","minSeq":\#(after.sequence ?? 0)}"#)["active"]?.boolValue == true, "\(user)")
        }
        #expect(try other.ok(#"{"op":"check","user":"during","product":"p1"}"#)["active"]?.boolValue == false)
    }

    @Test func aCommitWhoseAnswerIsLostIsFoundCommittedAndAcknowledgedOnce() throws {
        let server = try SharedPostgres.server()
        let databaseURL = try freshDatabase(on: server)
        let proxy = try FaultProxy(targetPort: server.port)
        let node = try ClusterNode(name: "cut", url: proxy.proxied(databaseURL, databasePort: server.port))
        let witness = try ClusterNode(name: "witness", url: databaseURL)
        try node.ok(#"{"op":"grant","user":"warm-up","product":"p1"}"#)

        try proxy.arm("cut")
        let answer = try node.send(#"{"op":"grant","user":"lost-answer","product":"p1","idempotencyKey":"lost-1"}"#)
        #expect(try proxy.waitFired(seconds: 10), "the proxy never saw the group's commit")
        // The node reconnects and finds its group committed: the write is acknowledged, not refused.
        #expect(answer.isOK, "\(answer.line)")
        let seq = try #require(answer.sequence)
        let memberships = try witness.ok(#"{"op":"memberships","user":"lost-answer","minSeq":\#(seq)}"#).memberships ?? []
        #expect(memberships.count == 1)
        // A retry with the same key replays it; nothing is doubled.
        let retry = try node.ok(#"{"op":"grant","user":"lost-answer","product":"p1","idempotencyKey":"lost-1"}"#)
        #expect(retry.isIdempotentReplay)
        #expect(try witness.ok(#"{"op":"memberships","user":"lost-answer","minSeq":\#(retry.sequence ?? 0)}"#).memberships?.count == 1)
        #expect(try server.psql("SELECT count(*) FROM entitled.changes", url: databaseURL).trimmingCharacters(in: .whitespacesAndNewlines) == "2")
    }

    @Test func aNodeWhoseConnectionIsTerminatedReconnectsAndCatchesUp() throws {
        let server = try SharedPostgres.server()
        let name = "t\(UInt32.random(in: 0...UInt32.max))"
        let url = try freshDatabase(on: server, name)
        let node = try ClusterNode(name: "n1", url: url)
        let other = try ClusterNode(name: "n2", url: url)
        _ = try server.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND application_name <> 'psql'")
        // Both nodes lost their connection: the write goes through once `other` is back.
        var grant: EntitledResponse?
        #expect(try eventually(10) {
            grant = try other.send(#"{"op":"grant","user":"while-cut","product":"p1","idempotencyKey":"while-cut"}"#)
            return grant?.isOK == true
        })
        #expect(try eventually(10) {
            try node.send(#"{"op":"check","user":"while-cut","product":"p1"}"#)["active"]?.boolValue == true
        })
        #expect(try node.ok(#"{"op":"grant","user":"after-cut","product":"p1"}"#).sequence ?? 0 > grant?.sequence ?? 0)
    }
}
}
