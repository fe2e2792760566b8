import EntitledClient
import EntitledCore
import EntitledServer
import EntitledTestSupport
import Foundation
import Logging
import Testing

/// An in-process server built as a node of a cluster (`RequestProcessor(store:replicated:)`) over an
/// `InProcessReplicatedLog`, on an ephemeral TCP port, for the duration of `body`.
func withClusterNode<Result>(
    commitDelay: Duration = .milliseconds(20),
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: (RunningServer, InProcessReplicatedLog) async throws -> Result
) async throws -> Result {
    let store = EntitlementStore()
    let log = InProcessReplicatedLog(store: store, commitDelay: commitDelay)
    var configuration = ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0))
    configure(&configuration)
    var logger = Logger(label: "entitled-test")
    logger.logLevel = .warning
    let server = EntitledServer(processor: RequestProcessor(store: store, replicated: log), configuration: configuration, logger: logger)
    let addresses = try await server.start()
    let running = RunningServer(server: server, store: store, port: addresses.first?.port ?? 0, unixSocketPath: nil, directory: try TemporaryDirectory())
    do {
        let result = try await body(running, log)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

@Suite("A node of a cluster: writes through the replicated log, reads from its replica")
struct ClusterNodeTests {
    @Test func aPipelinedGrantThenCheckOnOneConnectionSeesTheGrant() async throws {
        try await withClusterNode(commitDelay: .milliseconds(50)) { server, _ in
            let connection = try server.rawSocket()
            try connection.send(
                #"{"op":"grant","user":"u1","product":"pro","duration":"30d","id":1}"# + "\n"
                    + #"{"op":"check","user":"u1","product":"pro","id":2}"# + "\n"
            )
            let granted = try connection.readResponse()
            #expect(granted.isOK, "\(granted.line)")
            #expect(granted["id"]?.intValue == 1)
            #expect(granted["seq"]?.intValue == 1)
            let checked = try connection.readResponse()
            #expect(checked["id"]?.intValue == 2)
            #expect(checked.active == true, "the check after the grant ran before it committed: \(checked.line)")
        }
    }

    @Test func whileTheReplicaReloadsReadsAreAnsweredLoadingAndEverythingElseAsBefore() async throws {
        try await withClusterNode { server, log in
            let connection = try server.rawSocket()
            try connection.send(#"{"op":"grant","user":"u1","product":"pro","id":1}"# + "\n")
            #expect(try connection.readResponse().isOK)
            log.withholdReads("reloading after a test divergence")
            try connection.send(
                #"{"op":"check","user":"u1","product":"pro","id":2}"# + "\n" + #"{"op":"check","user":"u1","product":"pro","at":"2020-01-01T00:00:00Z","id":3}"# + "\n"
                    + #"{"op":"memberships","user":"u1","id":4}"# + "\n" + #"{"op":"customer","user":"u1","id":5}"# + "\n"
                    + #"{"op":"history","user":"u1","id":6}"# + "\n" + #"{"op":"catalog","id":7}"# + "\n" + #"{"op":"ping","id":8}"# + "\n"
                    + #"{"op":"stats","id":9}"# + "\n" + #"{"op":"grant","user":"u2","product":"pro","id":10}"# + "\n"
            )
            for id in 2...7 {
                let answer = try connection.readResponse()
                #expect(answer["id"]?.intValue == id)
                #expect(answer.errorCode == "loading", "\(answer.line)")
                #expect(answer.error?.message == "reloading after a test divergence")
            }
            for id in 8...10 {
                let answer = try connection.readResponse()
                #expect(answer["id"]?.intValue == id)
                #expect(answer.isOK, "\(answer.line)")
            }
            log.withholdReads(nil)
            try connection.send(#"{"op":"check","user":"u2","product":"pro","id":11}"# + "\n")
            #expect(try connection.readResponse().active == true)
        }
    }

    @Test func aFailedGroupAnswersUnavailableAndLaterLinesAreStillAnsweredInOrder() async throws {
        try await withClusterNode { server, log in
            log.failNextGroups(1)
            let connection = try server.rawSocket()
            try connection.send(
                #"{"op":"grant","user":"u1","product":"pro","id":1}"# + "\n" + #"{"op":"check","user":"u1","id":2}"# + "\n"
                    + #"{"op":"ping","id":3}"# + "\n" + #"{"op":"grant","user":"u1","product":"pro","id":4}"# + "\n"
                    + #"{"op":"check","user":"u1","id":5}"# + "\n"
            )
            let failed = try connection.readResponse()
            #expect(failed["id"]?.intValue == 1)
            #expect(failed.errorCode == "unavailable")
            #expect(failed.error?.message.contains("failed this group on purpose") == true, "\(failed.line)")
            let before = try connection.readResponse()
            #expect(before["id"]?.intValue == 2)
            #expect(before.active == false, "the failed grant is visible: \(before.line)")
            #expect(try connection.readResponse()["id"]?.intValue == 3)
            let granted = try connection.readResponse()
            #expect(granted["id"]?.intValue == 4)
            #expect(granted["seq"]?.intValue == 1, "the failed change's number is taken again: \(granted.line)")
            let after = try connection.readResponse()
            #expect(after["id"]?.intValue == 5)
            #expect(after.active == true)
            #expect(server.store.sequence == 1)
        }
    }

    @Test func everyWriteGoesThroughTheLogAndAnswersItsChangeNumber() async throws {
        try await withClusterNode { server, log in
            let watcher = try server.rawSocket()
            try watcher.send(#"{"op":"watch","all":true}"# + "\n")
            #expect(try watcher.readResponse().isOK)
            let connection = try await server.connect()
            func write(_ line: String, changes: Bool) async throws -> EntitledResponse {
                let before = server.store.sequence
                let response = try await connection.send(line: line)
                #expect(response.isOK, "\(line) -> \(response.line)")
                #expect(response.sequence == server.store.sequence, "\(line) -> \(response.line)")
                #expect(server.store.sequence == (changes ? before + 1 : before), "\(line)")
                return response
            }
            _ = try await write(#"{"op":"define","entitlement":"premium","products":["pro"]}"#, changes: true)
            let guest = try await write(#"{"op":"grant","device":"d1","product":"pro","duration":"30d","idempotencyKey":"k"}"#, changes: true)
            _ = try await write(#"{"op":"grant","device":"d1","product":"pro","duration":"30d","idempotencyKey":"k"}"#, changes: false)
            _ = try await write(#"{"op":"claim","device":"d1","user":"u1"}"#, changes: true)
            let id = try #require(guest.membership?.id)
            _ = try await write(
                #"{"op":"event","membership":"\#(id)","type":"cancellation","eventId":"e1","eventTime":"2026-01-01T00:00:00Z"}"#, changes: true)
            _ = try await write(#"{"op":"revoke","membership":"\#(id)"}"#, changes: true)
            _ = try await write(#"{"op":"revoke","membership":"\#(id)"}"#, changes: false)
            _ = try await write(#"{"op":"undefine","entitlement":"premium"}"#, changes: true)
            _ = try await write(#"{"op":"erase","user":"u1"}"#, changes: true)
            // The watcher was told of each change to a membership once its group committed, in order.
            var causes: [String] = []
            for _ in 0..<5 {
                let push = try JSONValue(parsing: try #require(try watcher.readLine()))
                causes.append(push["cause"]?.stringValue ?? "?")
            }
            #expect(causes == ["grant", "claim", "cancellation", "revoke", "erase"])
            #expect(log.replicationStatus.groupsCommitted == 7)
        }
    }

    @Test func everyConformanceScenarioPassesAgainstANodeOfACluster() async throws {
        try await withClusterNode(commitDelay: .milliseconds(1)) { server, _ in
            let run = try PythonRun(
                interpreter: PythonRun.interpreterWithJSONSchema(),
                ["Tools/conformance/run.py", "--require-schema", "--host", "127.0.0.1", "--port", String(server.port)]
            )
            #expect(run.exitedNormally && run.status == 0, "run.py exited with status \(run.status):\n\(run.output)")
            #expect(run.output.contains("PASS stats.ndjson"), "\(run.output)")
        }
    }

    @Test func aWriteTheStoreRefusesIsAnsweredWithItsErrorThroughTheLog() async throws {
        try await withClusterNode { server, _ in
            let connection = try await server.connect()
            let refused = try await connection.send(line: #"{"op":"revoke","membership":"mem_0000000000000"}"#)
            #expect(refused.errorCode == "not_found")
        }
    }

    @Test func aWatcherOnTheNodeIsToldOfGrantsAndRevokesOtherNodesMade() async throws {
        try await withClusterNode { server, log in
            let watcher = try server.rawSocket()
            try watcher.send(#"{"op":"watch","user":"u1"}"# + "\n")
            #expect(try watcher.readResponse().isOK)
            let granted = Box<Membership?>(nil)
            let grantSequence = try log.asAnotherNode { other in
                granted.value = try other.grant(Grant(subject: Subject(user: "u1", device: nil)!, productId: "pro")).value
            }
            let grantPush = try JSONValue(parsing: try #require(try watcher.readLine()))
            #expect(grantPush["push"]?.stringValue == "access", "\(grantPush)")
            #expect(grantPush["cause"]?.stringValue == "grant")
            #expect(grantPush["sequence"]?.intValue == Int(grantSequence))
            let id = try #require(granted.value?.id)
            #expect(grantPush["membership"]?["id"]?.stringValue == id.rawValue)

            try log.asAnotherNode { other in _ = try other.revoke(id, reason: "refund") }
            let revokePush = try JSONValue(parsing: try #require(try watcher.readLine()))
            #expect(revokePush["cause"]?.stringValue == "revoke", "\(revokePush)")
            #expect(revokePush["membership"]?["status"]?.stringValue == "revoked")
        }
    }

    @Test func aReadWithMinSeqWaitsForTheChangeThenAnswers() async throws {
        // The longest wait the server allows, and every step on a thread of its own: only the change may
        // answer the read, never the deadline. (In a task, a change made late by a cooperative pool that
        // other tests' blocking reads held for 30 s once came after the deadline: an early `stale`.)
        try await withClusterNode(configure: { $0.minimumSequenceWaitMilliseconds = ServerConfiguration.largestMinimumSequenceWaitMilliseconds }) { server, log in
            let port = server.port
            let (checked, ping) = try await onDedicatedThread { () -> (EntitledResponse, EntitledResponse) in
                let connection = try RawSocket(port: port)
                try connection.send(#"{"op":"check","user":"u1","minSeq":1,"id":1}"# + "\n" + #"{"op":"ping","id":2}"# + "\n")
                usleep(150_000)
                try log.asAnotherNode { other in _ = try other.grant(Grant(subject: Subject(user: "u1", device: nil)!, productId: "pro")) }
                return (try connection.readResponse(), try connection.readResponse())
            }
            #expect(checked["id"]?.intValue == 1)
            #expect(checked.active == true, "answered before the change arrived: \(checked.line)")
            #expect(ping["id"]?.intValue == 2)
        }
    }

    @Test func aReadWithMinSeqIsAnsweredStaleAfterTheWait() async throws {
        try await withClusterNode(configure: { $0.minimumSequenceWaitMilliseconds = 300 }) { server, _ in
            let connection = try server.rawSocket()
            let started = ContinuousClock.now
            try connection.send(#"{"op":"memberships","user":"u1","minSeq":7,"id":1}"# + "\n" + #"{"op":"ping","id":2}"# + "\n")
            let stale = try connection.readResponse()
            #expect(ContinuousClock.now - started >= .milliseconds(290))
            #expect(stale["id"]?.intValue == 1)
            #expect(stale.errorCode == "stale")
            let message = stale.error?.message ?? ""
            #expect(message.contains("up to 0") && message.contains("change 7") && message.contains("300 ms"), "\(message)")
            #expect(try connection.readResponse()["id"]?.intValue == 2)
            let stats = try await server.connect().send(line: #"{"op":"stats"}"#)
            #expect(stats["errors"]?["byCode"]?["stale"]?.intValue == 1)
        }
    }

    @Test func statsCarriesReplicationInsteadOfPersistence() async throws {
        try await withClusterNode { server, _ in
            let connection = try await server.connect()
            _ = try await connection.send(line: #"{"op":"grant","user":"u1","product":"pro"}"#)
            let stats = try await connection.send(line: #"{"op":"stats"}"#)
            #expect(stats["persistence"] == nil, "\(stats.line)")
            let replication = try #require(stats["replication"])
            #expect(replication["source"]?.stringValue == "test://in-process")
            #expect(replication["node"]?.stringValue == "node-a")
            #expect(replication["connected"]?.boolValue == true)
            #expect(replication["writable"]?.boolValue == true)
            #expect(replication["appliedSequence"]?.intValue == 1)
            #expect(replication["knownSequence"]?.intValue == 3)
            #expect(replication["lagChanges"]?.intValue == 2)
            if case .number(let seconds)? = replication["secondsSinceContact"] { #expect(seconds == "0.25") } else { Issue.record("secondsSinceContact: \(stats.line)") }
            #expect(replication["groupsCommitted"]?.intValue == 1)
            #expect(replication["reconnects"]?.intValue == 1)
            #expect(replication["lastError"]?.isNull == true)
        }
    }

    @Test func snapshotAsksTheReplicatedLog() async throws {
        try await withClusterNode { server, _ in
            let connection = try await server.connect()
            let snapshot = try await connection.send(line: #"{"op":"snapshot"}"#)
            #expect(snapshot.isOK, "\(snapshot.line)")
            #expect(snapshot["file"]?.stringValue == "test:snapshots/1")
            #expect(snapshot["bytes"]?.intValue == 123)
            #expect(snapshot["durationMs"]?.intValue == 4)
        }
    }

    @Test func aClientThatClosesItsSideWhileAReadWaitsStillGetsItsAnswers() async throws {
        // As above: the longest wait, and the steps on a thread of their own, so that the change comes first.
        try await withClusterNode(configure: { $0.minimumSequenceWaitMilliseconds = ServerConfiguration.largestMinimumSequenceWaitMilliseconds }) { server, log in
            let port = server.port
            let (customer, ping, closed) = try await onDedicatedThread { () -> (EntitledResponse, EntitledResponse, Bool) in
                let connection = try RawSocket(port: port)
                try connection.send(#"{"op":"customer","user":"u1","minSeq":1,"id":1}"# + "\n" + #"{"op":"ping","id":2}"#)
                connection.closeSending()
                usleep(100_000)
                try log.asAnotherNode { other in _ = try other.grant(Grant(subject: Subject(user: "u1", device: nil)!, productId: "pro")) }
                return (try connection.readResponse(), try connection.readResponse(), try connection.isClosedByServer())
            }
            #expect(customer["id"]?.intValue == 1)
            #expect(customer.isOK, "\(customer.line)")
            // The last line, without its newline, after the parked one; then the server closes.
            #expect(ping["id"]?.intValue == 2)
            #expect(closed)
        }
    }

    @Test func aGracefulStopAnswersAParkedReadBeforeClosing() async throws {
        let store = EntitlementStore()
        let log = InProcessReplicatedLog(store: store)
        var configuration = ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0))
        configuration.minimumSequenceWaitMilliseconds = 300
        let server = EntitledServer(processor: RequestProcessor(store: store, replicated: log), configuration: configuration)
        let port = try await server.start().first?.port ?? 0
        let connection = try RawSocket(port: port)
        try connection.send(#"{"op":"check","user":"u1","minSeq":3,"id":1}"# + "\n" + #"{"op":"ping","id":2}"# + "\n")
        try await Task.sleep(for: .milliseconds(50))
        await server.stop()
        let stale = try connection.readResponse()
        #expect(stale.errorCode == "stale", "\(stale.line)")
        #expect(try connection.readResponse()["id"]?.intValue == 2)
        #expect(try connection.isClosedByServer())
    }
}

/// A value a `@Sendable` closure fills in for the test to read after it ran (it runs synchronously).
final class Box<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
