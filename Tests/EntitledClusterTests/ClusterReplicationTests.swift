import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Several real `entitled --postgres` processes on one real PostgreSQL: what one node writes, the others
/// answer; concurrent writers on every node end with the same state everywhere.
extension ClusterTests {
    @Suite("Several nodes on one PostgreSQL")
    struct Replication {
    @Test func aWriteOnOneNodeIsReadOnTheOthersWithMinSeq() throws {
        let url = try freshDatabase(on: SharedPostgres.server())
        let nodes = try (1...3).map { try ClusterNode(name: "n\($0)", url: url) }
        try nodes[0].ok(#"{"op":"define","entitlement":"pro","products":["p1"]}"#)
        let grant = try nodes[1].ok(#"{"op":"grant","user":"alice","product":"p1","duration":"30d"}"#)
        let seq = try #require(grant.sequence)
        for node in nodes {
            let check = try node.ok(#"{"op":"check","user":"alice","entitlement":"pro","minSeq":\#(seq)}"#)
            #expect(check["active"]?.boolValue == true, "\(node.name): \(check.line)")
        }
        // The same membership id on every node.
        let id = try #require(grant.membership?.id)
        for node in nodes {
            #expect(try node.ok(#"{"op":"memberships","user":"alice","minSeq":\#(seq)}"#).memberships?.map(\.id) == [id])
        }
    }

    @Test func aReadAskingForAChangeNotYetMadeAnswersStale() throws {
        let url = try freshDatabase(on: SharedPostgres.server())
        let node = try ClusterNode(name: "n1", url: url, arguments: ["--min-seq-wait", "200"])
        let answer = try node.send(#"{"op":"check","user":"alice","minSeq":99}"#)
        #expect(answer.error?.code == .stale, "\(answer.line)")
    }

    @Test func concurrentWritersOnEveryNodeEndWithIdenticalState() throws {
        let url = try freshDatabase(on: SharedPostgres.server())
        let nodes = try (1...3).map { try ClusterNode(name: "n\($0)", url: url) }
        try nodes[0].ok(#"{"op":"define","entitlement":"pro","products":["p1","p2"]}"#)
        // Guest purchases on shared devices, made before the race.
        for device in 0..<6 { try nodes[device % 3].ok(#"{"op":"grant","device":"dev\#(device)","product":"p1","duration":"30d"}"#) }

        let tally = Tally()
        DispatchQueue.concurrentPerform(iterations: 9) { worker in
            let node = nodes[worker % 3]
            do {
                let connection = try node.connect()
                defer { connection.close() }
                for round in 0..<15 {
                    // Keys shared by the three workers of a round: one membership per key, whoever wins.
                    let key = "order-\(worker / 3)-\(round)"
                    let grant = try connection.send(line: #"{"op":"grant","user":"u\#(round % 5)","product":"p2","expiresAt":"2099-01-01T00:00:00Z","idempotencyKey":"\#(key)"}"#)
                    let claim = try connection.send(line: #"{"op":"claim","device":"dev\#(round % 6)","user":"u\#(worker)"}"#)
                    let event = try connection.send(line: #"{"op":"event","membership":"\#(grant.membership?.id ?? "none")","type":"renewal","eventId":"evt-\#(key)","eventTime":"2026-01-01T00:00:00Z","expiresAt":"2099-01-01T00:00:00Z"}"#)
                    for answer in [grant, claim, event] { tally.note(answer) }
                    if let id = grant.membership?.id { tally.keyed(key, id) }
                    if round % 5 == 4, let id = grant.membership?.id {
                        tally.note(try connection.send(line: #"{"op":"revoke","membership":"\#(id)","reason":"refund"}"#))
                    }
                }
            } catch {
                tally.fail("\(node.name): \(error)")
            }
        }
        let failures = tally.withLock { $0.failures }
        let highest = tally.withLock { $0.highest }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        #expect(tally.keyCount == 45)

        // Every node, once it holds the newest acknowledged change, answers every read the same.
        var views: [[String]] = []
        for node in nodes {
            var view: [String] = []
            for subject in (0..<9).map({ #""user":"u\#($0)""#}) + (0..<6).map({ #""device":"dev\#($0)""# }) {
                view.append(try node.ok(#"{"op":"memberships",\#(subject),"minSeq":\#(highest)}"#).line)
                view.append(try node.ok(#"{"op":"customer",\#(subject),"minSeq":\#(highest)}"#).line.replacingOccurrences(of: #"requestDate":"[^"]*""#, with: "", options: .regularExpression))
            }
            views.append(view)
        }
        #expect(views[0] == views[1])
        #expect(views[0] == views[2])
        // Each idempotency key made exactly one membership.
        let all = try nodes[0].ok(#"{"op":"stats"}"#)
        #expect(all["replication"] != nil, "\(all.line)")
    }

    @Test func aWatcherOnOneNodeHearsOfAGrantMadeOnAnother() throws {
        let url = try freshDatabase(on: SharedPostgres.server())
        let watcherNode = try ClusterNode(name: "watcher", url: url)
        let writerNode = try ClusterNode(name: "writer", url: url)
        let watch = try watcherNode.connect()
        defer { watch.close() }
        #expect(try watch.send(.watch(user: "carol")).isOK)
        try writerNode.ok(#"{"op":"grant","user":"carol","product":"p1","duration":"1d"}"#)
        let push = try watch.nextPush(timeout: 10)
        #expect(push != nil)
    }

    @Test func aTransferOnOneNodeMovesThePurchaseOnEveryNodeAndTellsTheFormerOwnersWatcher() throws {
        let url = try freshDatabase(on: SharedPostgres.server())
        let first = try ClusterNode(name: "first", url: url)
        let second = try ClusterNode(name: "second", url: url)
        let watch = try first.connect()
        defer { watch.close() }
        #expect(try watch.send(.watch(user: "alice")).isOK)
        let bought = try first.ok(#"{"op":"grant","user":"alice","product":"p1","duration":"30d","transactionId":"tx-1"}"#)
        #expect(try watch.nextPush(timeout: 10)?["cause"]?.stringValue == "grant")
        let moved = try second.ok(#"{"op":"grant","user":"bob","product":"p1","duration":"30d","transactionId":"tx-1"}"#)
        #expect(moved.membership?.id == bought.membership?.id)
        #expect(moved.transferredFrom?.user == "alice")
        let seq = try #require(moved.sequence)
        for node in [first, second] {
            #expect(try node.ok(#"{"op":"check","user":"bob","minSeq":\#(seq)}"#)["active"]?.boolValue == true, "\(node.name)")
            #expect(try node.ok(#"{"op":"check","user":"alice","minSeq":\#(seq)}"#)["active"]?.boolValue == false, "\(node.name)")
            let trail = try node.ok(#"{"op":"history","user":"alice"}"#).history?.map(\.action)
            #expect(trail == ["transfer", "grant"], "\(node.name)")
        }
        // Alice's watcher, on the node that did not make the transfer, hears of it.
        let push = try watch.nextPush(timeout: 10)
        #expect(push?["cause"]?.stringValue == "transfer")
        #expect(push?["membership"]?["user"]?.stringValue == "bob")
    }

    @Test func anExtensionOnOneNodeMovesTheExpiryOnEveryNodeWithItsTrailAndTellsWatchersElsewhere() throws {
        let url = try freshDatabase(on: SharedPostgres.server())
        let first = try ClusterNode(name: "first", url: url)
        let second = try ClusterNode(name: "second", url: url)
        let watch = try first.connect()
        defer { watch.close() }
        #expect(try watch.send(.watch(user: "alice")).isOK)
        let granted = try first.ok(#"{"op":"grant","user":"alice","product":"p1","expiresAt":"2031-01-31T00:00:00Z"}"#)
        #expect(try watch.nextPush(timeout: 10)?["cause"]?.stringValue == "grant")
        let id = try #require(granted.membership?.id)
        let extended = try second.ok(#"{"op":"extend","membership":"\#(id)","duration":"1mo","reason":"outage"}"#)
        #expect(extended.previousExpiresAt == "2031-01-31T00:00:00Z")
        #expect(extended.membership?.expiresAt == "2031-02-28T00:00:00Z")
        let seq = try #require(extended.sequence)
        for node in [first, second] {
            let check = try node.ok(#"{"op":"check","user":"alice","minSeq":\#(seq)}"#)
            #expect(check["expiresAt"]?.stringValue == "2031-02-28T00:00:00Z", "\(node.name): \(check.line)")
            let newest = try #require(try node.ok(#"{"op":"history","user":"alice"}"#).history?.first)
            #expect(newest.action == "extend", "\(node.name)")
            #expect(newest.reason == "outage", "\(node.name)")
            #expect(newest.previousExpiresAt == "2031-01-31T00:00:00Z", "\(node.name)")
        }
        // The watcher, on the node that did not make the extension, hears of it.
        let push = try watch.nextPush(timeout: 10)
        #expect(push?["cause"]?.stringValue == "extend")
        #expect(push?["membership"]?["expiresAt"]?.stringValue == "2031-02-28T00:00:00Z")
    }

    @Test func aNewNodeStartsFromTheSnapshotInTheDatabaseAndTheChangesAfterIt() throws {
        let server = try SharedPostgres.server()
        let url = try freshDatabase(on: server)
        let first = try ClusterNode(name: "first", url: url)
        for user in 0..<20 { try first.ok(#"{"op":"grant","user":"s\#(user)","product":"p1"}"#) }
        let snapshot = try first.ok(#"{"op":"snapshot"}"#)
        #expect(snapshot.line.contains("postgres:entitled.snapshots/20"), "\(snapshot.line)")
        let after = try first.ok(#"{"op":"grant","user":"late","product":"p1"}"#)
        let joined = try ClusterNode(name: "joined", url: url)
        #expect(try joined.ok(#"{"op":"check","user":"s7","product":"p1"}"#)["active"]?.boolValue == true)
        #expect(try joined.ok(#"{"op":"check","user":"late","product":"p1","minSeq":\#(after.sequence ?? 0)}"#)["active"]?.boolValue == true)
        let stats = try joined.ok(#"{"op":"stats"}"#)
        #expect(stats.line.contains(#""snapshotSequence":20"#), "\(stats.line)")
    }
}
}
