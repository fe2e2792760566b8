import EntitledClient
import EntitledServer
import EntitledTestSupport
import Foundation
import Testing

/// `{"op":"stats"}` over real connections: what it counts, and the store and data directory it reports.
@Suite struct StatisticsTests {
    @Test func statsCountsRequestsByOperationAndErrorsByCode() async throws {
        try await withTestServer { server in
            let connection = try await server.connect()
            _ = try await connection.send(line: #"{"op":"grant","user":"u1","product":"pro"}"#)
            for _ in 0..<25 { #expect(try await connection.send(line: #"{"op":"check","user":"u1","product":"pro"}"#).active == true) }
            #expect(try await connection.send(line: #"{"op":"#).errorCode == "bad_json")
            #expect(try await connection.send(line: #"{"op":"steal"}"#).errorCode == "unknown_op")
            #expect(try await connection.send(line: #"{"op":"revoke","membership":"mem_000000000000x"}"#).errorCode == "not_found")

            let stats = try await connection.send(line: #"{"op":"stats","id":"s"}"#)
            #expect(stats.isOK)
            #expect(stats["id"] == .string("s"))
            let requests = try #require(stats["requests"])
            #expect(requests["byOp"]?["check"]?.intValue == 25)
            #expect(requests["byOp"]?["grant"]?.intValue == 1)
            #expect(requests["byOp"]?["revoke"]?.intValue == 1)
            #expect(requests["byOp"]?["ping"]?.intValue == 0)
            #expect(requests["invalid"]?.intValue == 2)
            #expect(requests["total"]?.intValue == 29)  // this stats request is not counted yet
            let errors = try #require(stats["errors"])
            #expect(errors["byCode"]?["bad_json"]?.intValue == 1)
            #expect(errors["byCode"]?["unknown_op"]?.intValue == 1)
            #expect(errors["byCode"]?["not_found"]?.intValue == 1)
            #expect(errors["total"]?.intValue == 3)

            let check = try #require(stats["latencyMicros"]?["check"])
            #expect(check["count"]?.intValue == 25)
            let percentiles = try ["p50", "p90", "p99", "p999", "max"].map { try #require(Self.number(check[$0])) }
            #expect(percentiles[0] > 0)
            #expect(percentiles == percentiles.sorted(), "percentiles out of order: \(percentiles)")
            #expect(stats["latencyMicros"]?["ping"] == nil, "an operation never run has no latency entry")

            // The stats request itself is counted by the next one.
            let next = try await connection.send(line: #"{"op":"stats"}"#)
            #expect(next["requests"]?["byOp"]?["stats"]?.intValue == 1)
            await connection.close()
        }
    }

    static func number(_ value: JSONValue?) -> Double? {
        guard case .number(let text)? = value else { return nil }
        return Double(text)
    }

    @Test func statsReportsTheStoreSizeWithDevicesKeptThroughAClaim() async throws {
        try await withTestServer { server in
            let connection = try await server.connect()
            for line in [
                #"{"op":"grant","user":"u1","product":"pro"}"#, #"{"op":"grant","user":"u1","product":"plus"}"#,
                #"{"op":"grant","user":"u2","product":"pro"}"#, #"{"op":"grant","device":"d1","product":"pro"}"#,
                #"{"op":"grant","device":"d2","product":"pro"}"#, #"{"op":"claim","device":"d1","user":"u3"}"#,
                #"{"op":"grant","device":"d1","product":"plus"}"#, #"{"op":"define","entitlement":"premium","products":["pro"]}"#,
            ] {
                #expect(try await connection.send(line: line).isOK, "\(line)")
            }
            let store = try #require(try await connection.send(line: #"{"op":"stats"}"#)["store"])
            #expect(store["users"]?.intValue == 3)
            #expect(store["devices"]?.intValue == 2)
            #expect(store["memberships"]?.intValue == 6)
            #expect(store["entitlements"]?.intValue == 1)
            await connection.close()
        }
    }

    @Test func statsCountsConnectionsOpenAcceptedRefusedAndClosedIdle() async throws {
        try await withTestServer(configure: { $0.maximumConnections = 2; $0.idleTimeoutSeconds = 1 }) { server in
            // Two connections that say nothing, one too many, then a fourth once the first two timed out.
            let idle = Handoff([try server.rawSocket(), try server.rawSocket()])
            let refused = Handoff(try server.rawSocket())
            let (busy, closed) = try await onDedicatedThread {
                (try refused.value.readResponse().errorCode, try idle.value.map { try $0.isClosedByServer() })
            }
            #expect(busy == "busy")
            #expect(closed == [true, true])
            try await ConnectionLimitsTests.waitUntil { server.server.connectionCount == 0 }

            // Asked on a thread of its own right after connecting: with a 1 s idle timeout, a client whose
            // task the busy cooperative pool resumed late would be closed as idle before it asked.
            let port = server.port
            let line = try await onDedicatedThread { () -> String in
                let socket = try RawSocket(port: port)
                try socket.send(#"{"op":"stats"}"# + "\n")
                return try socket.readLine() ?? "closed"
            }
            let stats = try EntitledResponse(line: line)
            let connections = try #require(stats["connections"])
            #expect(connections["open"]?.intValue == 1)
            #expect(connections["accepted"]?.intValue == 3)
            #expect(connections["refused"]?.intValue == 1)
            #expect(connections["closedIdle"]?.intValue == 2)
            #expect(stats["errors"]?["byCode"]?["busy"]?.intValue == 1)
            #expect(stats["persistence"] == .null, "an in-memory server has no data directory")
        }
    }

    @Test func aCheckTokenMayNotReadStatsAndAnAdminTokenMay() async throws {
        try await AuthenticationTests.withAuthenticatingServer { server in
            let connection = try await server.connect()
            #expect(try await connection.send(line: #"{"op":"stats"}"#).errorCode == "unauthorized")
            #expect(try await connection.send(line: #"{"op":"auth","token":"\#(AuthenticationTests.checkToken)"}"#).isOK)
            #expect(try await connection.send(line: #"{"op":"stats"}"#).errorCode == "forbidden")
            #expect(try await connection.send(line: #"{"op":"auth","token":"\#(AuthenticationTests.adminToken)"}"#).isOK)
            let stats = try await connection.send(line: #"{"op":"stats"}"#)
            #expect(stats.isOK)
            #expect(stats["errors"]?["byCode"]?["unauthorized"]?.intValue == 1)
            #expect(stats["errors"]?["byCode"]?["forbidden"]?.intValue == 1)
            #expect(stats["requests"]?["invalid"]?.intValue == 2, "refused requests are counted as invalid lines")
            #expect(stats["requests"]?["byOp"]?["auth"]?.intValue == 2)
            await connection.close()
        }
    }

    @Test func aRealServerReportsItsSnapshotAndLogBeforeAndAfterARestart() async throws {
        // No periodic snapshot: a loaded runner has held this task for more than the default 60 s between
        // the grant and its `stats`, and the periodic one came in between. The one asked for below and the
        // final one at the graceful stop are what this test counts.
        let server = try RunningEntitled(arguments: ["--snapshot-interval", "0"])
        defer { server.stop() }
        var connection = try await EntitledAsyncConnection.local(port: server.port)
        #expect(try await connection.send(line: #"{"op":"grant","user":"u1","product":"pro"}"#).isOK)
        let before = try #require(try await connection.send(line: #"{"op":"stats"}"#)["persistence"])
        #expect(before["fsync"] == .string("always"))
        #expect(before["lastChange"]?.intValue == 1)
        #expect(before["changesSinceSnapshot"]?.intValue == 1)
        #expect((before["logBytesSinceSnapshot"]?.intValue ?? 0) > 0)
        #expect(before["snapshot"] == .null)

        let snapshot = try await connection.send(line: #"{"op":"snapshot"}"#)
        #expect(try await connection.send(line: #"{"op":"grant","user":"u2","product":"pro"}"#).isOK)
        let after = try #require(try await connection.send(line: #"{"op":"stats"}"#)["persistence"])
        #expect(after["lastChange"]?.intValue == 2)
        #expect(after["changesSinceSnapshot"]?.intValue == 1)
        #expect(after["snapshotsWritten"]?.intValue == 1)
        #expect(after["snapshot"]?["file"] == snapshot["file"])
        #expect(after["snapshot"]?["bytes"] == snapshot["bytes"])
        #expect(after["snapshot"]?["change"]?.intValue == 1)
        #expect(after["snapshot"]?["writtenAt"]?.stringValue != nil)
        #expect((after["logBytesSinceSnapshot"]?.intValue ?? 0) < (after["logBytesWritten"]?.intValue ?? 0))
        await connection.close()

        // A graceful stop writes a final snapshot; the next start loads it and counts from zero.
        try server.restart()
        connection = try await EntitledAsyncConnection.local(port: server.port)
        let restarted = try await connection.send(line: #"{"op":"stats"}"#)
        let persistence = try #require(restarted["persistence"])
        #expect(persistence["lastChange"]?.intValue == 2)
        #expect(persistence["changesSinceSnapshot"]?.intValue == 0)
        #expect(persistence["snapshotsWritten"]?.intValue == 0)
        #expect(persistence["snapshot"]?["change"]?.intValue == 2)
        #expect(persistence["snapshot"]?["writtenAt"] == .null, "loaded at start, not written by this process")
        #expect((persistence["snapshot"]?["bytes"]?.intValue ?? 0) > 0)
        #expect(restarted["store"]?["memberships"]?.intValue == 2)
        #expect(restarted["requests"]?["byOp"]?["grant"]?.intValue == 0)
        await connection.close()
    }

    @Test func aRealServerReportsItsGroupCommitsBatchesSyncsAndWaits() async throws {
        let server = try RunningEntitled()
        defer { server.stop() }
        // Forty writers at once, each on its own connection: the log acknowledges them in batches.
        let port = server.port
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<40 {
                group.addTask {
                    let connection = try await EntitledAsyncConnection.local(port: port)
                    let answer = try await connection.send(line: #"{"op":"grant","user":"writer-\#(writer)","product":"pro"}"#)
                    #expect(answer.isOK)
                    await connection.close()
                }
            }
            try await group.waitForAll()
        }
        let connection = try await EntitledAsyncConnection.local(port: server.port)
        let persistence = try #require(try await connection.send(line: #"{"op":"stats"}"#)["persistence"])
        let group = try #require(persistence["groupCommit"])
        let groups = try #require(group["groups"]?.intValue)
        #expect(group["changes"]?.intValue == 40, "every acknowledged grant was in one batch")
        #expect((1...40).contains(groups))
        #expect(groups == persistence["logSyncs"]?.intValue, "with fsync always, one sync per batch")
        let meanSize = try #require(group["meanSize"]?.doubleValue)
        #expect(abs(meanSize - 40.0 / Double(groups)) < 0.05)
        #expect((group["largest"]?.intValue ?? 0) >= Int(meanSize.rounded(.down)))
        let meanSync = try #require(group["meanSyncMicros"]?.doubleValue)
        let maxSync = try #require(group["maxSyncMicros"]?.doubleValue)
        #expect(meanSync > 0 && maxSync >= meanSync)
        let meanWait = try #require(group["meanWaitMicros"]?.doubleValue)
        #expect(meanWait >= meanSync * 0.99, "a change waits at least for its batch's sync")
        #expect((group["maxWaitMicros"]?.doubleValue ?? 0) >= meanWait)
        #expect(group["handedOff"]?.intValue != nil)
        await connection.close()
    }
}
