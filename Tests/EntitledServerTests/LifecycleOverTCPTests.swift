import EntitledClient
import EntitledCore
import Testing

@Suite("Lifecycle events, views, audit and watch over a real TCP connection")
struct LifecycleOverTCPTests {
    @Test func anEventIsAppliedOnceAndItsAnswerCarriesTheMembershipAfterIt() async throws {
        try await withTestServer { server in
            let connection = try await server.connect()
            let grant = try await connection.send(line: #"{"op":"grant","user":"u1","product":"prod_pro","duration":"30d","willRenew":true}"#)
            let id = try #require(grant.membership?.id)
            let event = #"{"op":"event","membership":"\#(id)","type":"cancellation","eventId":"evt_1","eventTime":"2026-01-01T00:00:00Z","id":7}"#
            let applied = try await connection.send(line: event)
            #expect(applied.isOK)
            #expect(applied["id"]?.intValue == 7)
            #expect(applied["applied"]?.boolValue == true)
            #expect(applied.membership?.status == "canceled")
            #expect(applied.membership?.isActive == true)
            #expect(applied.membership?.renewState == "canceled")
            let again = try await connection.send(line: event)
            #expect(again["applied"]?.boolValue == false)
            #expect(again["reason"]?.stringValue == "duplicate")
            let older = try await connection.send(line: 
                #"{"op":"event","membership":"\#(id)","type":"uncancellation","eventId":"evt_0","eventTime":"2025-12-01T00:00:00Z"}"#)
            #expect(older["reason"]?.stringValue == "out_of_order")
            let unknown = try await connection.send(line: 
                #"{"op":"event","membership":"mem_0000000000000","type":"pause","eventId":"e","eventTime":"2026-01-01T00:00:00Z"}"#)
            #expect(unknown.errorCode == "not_found")
        }
    }

    @Test func aRetriedGrantReturnsTheFirstMembershipAndAReusedKeyIsAConflict() async throws {
        try await withTestServer { server in
            let connection = try await server.connect()
            let line = #"{"op":"grant","device":"d1","product":"prod_pro","idempotencyKey":"order-1"}"#
            let first = try await connection.send(line: line)
            let retried = try await connection.send(line: line)
            #expect(retried.membership?.id == first.membership?.id)
            #expect(first["idempotentReplay"] == nil)
            #expect(retried["idempotentReplay"]?.boolValue == true)
            let conflict = try await connection.send(line: #"{"op":"grant","device":"d1","product":"prod_other","idempotencyKey":"order-1"}"#)
            #expect(conflict.errorCode == "conflict")
            #expect(server.store.membershipCount == 1)
        }
    }

    @Test func customerAndHistoryAnswerTheSubjectsViewAndTrail() async throws {
        try await withTestServer { server in
            let connection = try await server.connect()
            _ = try await connection.send(line: #"{"op":"define","entitlement":"pro","products":["prod_pro"],"reason":"launch"}"#)
            let grant = try await connection.send(line: #"{"op":"grant","device":"d1","product":"prod_pro","duration":"30d"}"#)
            let id = try #require(grant.membership?.id)
            _ = try await connection.send(line: #"{"op":"claim","device":"d1","user":"u1","reason":"login"}"#)
            _ = try await connection.send(line: #"{"op":"revoke","membership":"\#(id)","reason":"chargeback"}"#)

            let customer = try await connection.send(line: #"{"op":"customer","user":"u1"}"#)
            let info = try #require(customer["customer"])
            #expect(info["entitlements"]?.objectMembers?.isEmpty == true)  // the only membership was revoked
            #expect(info["activeProducts"] == [])
            #expect(info["requestDate"]?.stringValue != nil)

            let history = try await connection.send(line: #"{"op":"history","user":"u1"}"#)
            let entries = try #require(history["history"]?.arrayValue)
            #expect(entries.map { $0["action"]?.stringValue } == ["revoke", "claim", "grant"])
            #expect(entries.map { $0["reason"]?.stringValue } == ["chargeback", "login", nil])
            #expect(entries.allSatisfy { $0["actor"]?.stringValue == "local" })
            let catalogTrail = try await connection.send(line: #"{"op":"history","entitlement":"pro"}"#)
            #expect(catalogTrail["history"]?.arrayValue?.first?["reason"]?.stringValue == "launch")
        }
    }

    @Test func aWatcherIsPushedTheChangesOfItsSubjectAndNothingElse() async throws {
        try await withTestServer(eventLoops: 2) { server in
            let watcher = try await server.connect()
            let writer = try await server.connect()
            let watch = try await watcher.send(line: #"{"op":"watch","user":"u1"}"#)
            #expect(watch["watches"]?.intValue == 1)

            let grant = try await writer.send(line: #"{"op":"grant","user":"u1","product":"prod_pro","duration":"30d"}"#)
            let id = try #require(grant.membership?.id)
            let pushed = try #require(await watcher.nextPush())
            #expect(pushed.kind == "access")
            #expect(pushed.cause == "grant")
            #expect(pushed["ok"] == nil)
            #expect(pushed.membership?.id == id)
            #expect(pushed.sequence == 1)

            _ = try await writer.send(line: #"{"op":"grant","user":"someone-else","product":"prod_pro"}"#)
            _ = try await writer.send(
                line: #"{"op":"event","membership":"\#(id)","type":"pause","eventId":"e1","eventTime":"2026-01-01T00:00:00Z"}"#)
            let paused = try #require(await watcher.nextPush())
            #expect(paused.cause == "pause")
            #expect(paused.sequence == 3)
            #expect(paused.membership?.status == "paused")

            let unwatch = try await watcher.send(line: #"{"op":"unwatch"}"#)
            #expect(unwatch["watches"]?.intValue == 0)
            _ = try await writer.send(line: #"{"op":"revoke","membership":"\#(id)"}"#)
            #expect(try await watcher.send(line: #"{"op":"ping","id":"after"}"#)["id"]?.stringValue == "after")
            // Nothing was pushed for the other user or after the unwatch: a push sent before the ping's
            // answer came before it on the wire, so it would be waiting unread now.
            #expect(await watcher.closeAndCollectUnreadPushes().map(\.line) == [])
        }
    }

    @Test func aWatcherOfEverySubjectIsToldOfAClaimOnAnyDevice() async throws {
        try await withTestServer { server in
            let watcher = try await server.connect()
            let writer = try await server.connect()
            _ = try await writer.send(line: #"{"op":"grant","device":"d9","product":"prod_pro"}"#)
            #expect(try await watcher.send(line: #"{"op":"watch","all":true}"#)["watches"]?.intValue == 1)
            _ = try await writer.send(line: #"{"op":"claim","device":"d9","user":"u9"}"#)
            let pushed = try #require(await watcher.nextPush())
            #expect(pushed.cause == "claim")
            #expect(pushed.membership?.user == "u9")
        }
    }

    @Test func aWatcherIsPushedTheExpiryAtTheMomentAMembershipRunsOutByItself() async throws {
        try await withTestServer { server in
            let writer = try await server.connect()
            // The second watch must be set before the membership runs out, and on a machine busy with the rest
            // of the suite this task may be held for seconds between two requests (five were not always
            // enough): when it was answered too late to prove anything, the same is tried again with a later
            // expiry (on another device).
            for (attempt, ahead) in [5_000, 15_000, 40_000].enumerated() {
                let device = "d1-\(attempt)"
                let watcher = try await server.connect()
                // Watched before the grant exists: the grant's push arms the timer.
                _ = try await watcher.send(line: #"{"op":"watch","device":"\#(device)"}"#)
                let expiry = server.store.now().adding(TimeSpan(milliseconds: Int64(ahead)))
                _ = try await writer.send(line: #"{"op":"grant","device":"\#(device)","product":"prod_pro","expiresAt":"\#(expiry.rfc3339)"}"#)
                // Already active before the watch: the watch arms its timer.
                let other = try await server.connect()
                _ = try await other.send(line: #"{"op":"watch","device":"\#(device)"}"#)
                guard server.store.now() < expiry else { continue }

                for connection in [watcher, other] {
                    var pushes: [EntitledPush] = []
                    while let push = await connection.nextPush(within: .milliseconds(Int64(ahead)) + .seconds(30)) {
                        pushes.append(push)
                        if push.cause == "expired" { break }
                    }
                    let expired = try #require(pushes.last)
                    #expect(expired.cause == "expired")
                    #expect(expired.membership?.status == "expired")
                    #expect(server.store.now() >= expiry)
                }
                #expect(try await writer.send(line: #"{"op":"check","device":"\#(device)"}"#).active == false)
                return
            }
            Issue.record("every second watch was answered after its membership had expired: the machine is too busy to tell")
        }
    }

    @Test func aConnectionMayHoldAtMostTheWatchLimit() async throws {
        try await withTestServer { server in
            let connection = try await server.connect()
            for index in 0..<1000 {
                #expect(try await connection.send(line: #"{"op":"watch","user":"u\#(index)"}"#).isOK)
            }
            let refused = try await connection.send(line: #"{"op":"watch","user":"one-more"}"#)
            #expect(refused.errorCode == "bad_request")
            #expect(try await connection.send(line: #"{"op":"watch","user":"u5"}"#)["watches"]?.intValue == 1000)
        }
    }
}

extension LifecycleOverTCPTests {
    /// A watcher often leaves pushed lines unread when it goes; its connection then ends in a reset, and
    /// the failed read must close that connection, not stop the server (it trapped on the negative count).
    @Test func clientsThatCloseWithAnswersUnreadLeaveTheServerServingOthers() async throws {
        try await withTestServer { server in
            for round in 0..<10 {
                // Raw: the test needs answers left unread in the socket and a reset (SO_LINGER 0).
                let connection = try server.rawSocket()
                try connection.send(String(repeating: #"{"op":"ping"}"# + "\n", count: 50))
                // The answers arrive and stay unread: closing now sends a reset, not an orderly end.
                try await Task.sleep(for: .milliseconds(20))
                if round % 2 == 0 { connection.reset() }  // else closed by deinit
            }
            try await Task.sleep(for: .milliseconds(100))
            #expect(try await server.connect().send(line: #"{"op":"ping"}"#).isOK)
        }
    }

    @Test func membershipsAtAPastMomentListWhatTheSubjectSawThen() async throws {
        try await withTestServer { server in
            let connection = try await server.connect()
            let before = server.store.now().adding(TimeSpan(milliseconds: -1)).rfc3339
            try await Task.sleep(for: .milliseconds(5))
            let grant = try await connection.send(line: #"{"op":"grant","device":"d1","product":"prod_pro","duration":"30d"}"#)
            let created = try #require(grant.membership?.createdAt)
            try await Task.sleep(for: .milliseconds(5))  // the claim a few milliseconds after the creation
            _ = try await connection.send(line: #"{"op":"claim","device":"d1","user":"u1"}"#)
            try await Task.sleep(for: .milliseconds(5))

            func listed(_ subject: String, at moment: String) async throws -> [JSONValue] {
                let answer = try await connection.send(line: #"{"op":"memberships",\#(subject),"at":"\#(moment)"}"#)
                return try #require(answer["memberships"]?.arrayValue)
            }
            #expect(try await listed(#""device":"d1""#, at: before).isEmpty)
            #expect(try await listed(#""device":"d1""#, at: created).count == 1)
            #expect(try await listed(#""user":"u1""#, at: created).isEmpty)
            #expect(try await listed(#""user":"u1""#, at: server.store.now().rfc3339).count == 1)
        }
    }
}

extension LifecycleOverTCPTests {
    @Test func aDeviceWatchArmsTheTimerOfAMembershipBoughtOnTheDeviceAndClaimedSince() async throws {
        try await withTestServer { server in
            let writer = try await server.connect()
            // The watch must be set before the membership runs out, and on a machine busy with the rest of
            // the suite a few seconds may pass between two requests: when the watch was answered too late
            // to prove anything, the same is tried again with a later expiry (on another device).
            for (attempt, ahead) in [2_000, 10_000, 40_000].enumerated() {
                let (device, user) = ("d2-\(attempt)", "u2-\(attempt)")
                let expiry = server.store.now().adding(TimeSpan(milliseconds: Int64(ahead)))
                _ = try await writer.send(line: #"{"op":"grant","device":"\#(device)","product":"prod_pro","expiresAt":"\#(expiry.rfc3339)"}"#)
                _ = try await writer.send(line: #"{"op":"claim","device":"\#(device)","user":"\#(user)"}"#)
                let watcher = try await server.connect()
                _ = try await watcher.send(line: #"{"op":"watch","device":"\#(device)"}"#)
                guard server.store.now() < expiry else { continue }
                let expired = try #require(await watcher.nextPush(within: .milliseconds(Int64(ahead)) + .seconds(30)))
                #expect(expired.cause == "expired")
                #expect(expired.membership?.user == user)
                return
            }
            Issue.record("every watch was answered after its membership had expired: the machine is too busy to tell")
        }
    }

    @Test func aCheckAMillisecondBehindTheServerSeesThePresentAndOneBeforeAChangeSeesThePast() async throws {
        try await withTestServer { server in
            let connection = try await server.connect()
            let beforeGrant = server.store.now().adding(TimeSpan(milliseconds: -1)).rfc3339
            try await Task.sleep(for: .milliseconds(3))
            _ = try await connection.send(line: #"{"op":"grant","user":"u3","product":"prod_pro"}"#)
            try await Task.sleep(for: .milliseconds(3))
            let justBehind = server.store.now().adding(TimeSpan(milliseconds: -1)).rfc3339
            #expect(try await connection.send(line: #"{"op":"check","user":"u3","at":"\#(justBehind)"}"#).active == true)
            #expect(try await connection.send(line: #"{"op":"check","user":"u3","at":"\#(beforeGrant)"}"#).active == false)
        }
    }
}

extension LifecycleOverTCPTests {
    /// 1,100 timers left behind by an unwatch pass the sweep's threshold; the sweep must keep the timers
    /// that still wait (a second watcher's).
    @Test func sweepingTheTimersAWatcherLeftKeepsTheTimersOthersWaitFor() async throws {
        try await withTestServer(eventLoops: 1) { server in
            let writer = try await server.connect()
            for index in 0..<1100 {
                _ = try await writer.send(line: #"{"op":"grant","user":"bulk\#(index)","product":"prod_pro","duration":"30d"}"#)
            }
            // The watches and the unwatch must come before the expiry, and on a machine busy with the rest of
            // the suite this task may be held for seconds between two requests: when the unwatch was answered
            // too late to prove anything, the same is tried again with a later expiry (for another user).
            for (attempt, ahead) in [700, 5_000, 30_000].enumerated() {
                let user = "soon-\(attempt)"
                let expiry = server.store.now().adding(TimeSpan(milliseconds: Int64(ahead)))
                _ = try await writer.send(line: #"{"op":"grant","user":"\#(user)","product":"prod_pro","expiresAt":"\#(expiry.rfc3339)"}"#)

                let staying = try await server.connect()
                #expect(try await staying.send(line: #"{"op":"watch","user":"\#(user)"}"#)["watches"]?.intValue == 1)
                let leaving = try await server.connect()
                #expect(try await leaving.send(line: #"{"op":"watch","all":true}"#)["watches"]?.intValue == 1)
                #expect(try await leaving.send(line: #"{"op":"unwatch"}"#)["watches"]?.intValue == 0)
                guard server.store.now() < expiry else { continue }

                let expired = try #require(await staying.nextPush(within: .milliseconds(Int64(ahead)) + .seconds(30)))
                #expect(expired.cause == "expired")
                #expect(expired.membership?.user == user)
                return
            }
            Issue.record("every unwatch was answered after the membership had expired: the machine is too busy to tell")
        }
    }
}

@Suite("Versioning over a real TCP connection")
struct HelloOverTCPTests {
    @Test func helloAnswersTheProtocolVersionTheServerAndEveryOperation() async throws {
        try await withTestServer { server in
            let hello = try await server.connect().send(line: #"{"op":"hello","id":1}"#)
            #expect(hello.isOK)
            #expect(hello["protocol"]?.intValue == 5)
            #expect(hello["server"]?.stringValue?.hasPrefix("entitled ") == true)
            let listed = try #require(hello["operations"]?.arrayValue)
            let operations = listed.compactMap(\.stringValue)
            #expect(operations.count == listed.count, "every operation is named by a string")
            #expect(operations.contains("check"))
            #expect(operations.contains("hello"))
            #expect(Set(operations).count == operations.count)
            // Every operation it names is one it answers: none is refused as unknown.
            let connection = try await server.connect()
            for operation in operations {
                #expect(try await connection.send(line: #"{"op":"\#(operation)"}"#).errorCode != "unknown_op", "\(operation)")
            }
            // And it lists the fields each takes: a field it lists is never refused as one the operation
            // does not take, and a field it does not list is.
            let fields = try #require(hello["fields"])
            for operation in operations {
                let taken = try #require(fields[operation]?.arrayValue, "\(operation)").compactMap(\.stringValue)
                for field in taken {
                    let answer = try await connection.send(line: #"{"op":"\#(operation)","\#(field)":null}"#)
                    #expect(answer.error?.message.contains("not used by") != true, "\(operation) \(field): \(answer.line)")
                }
                if !taken.contains("limit") {
                    let answer = try await connection.send(line: #"{"op":"\#(operation)","limit":null}"#)
                    #expect(answer.error?.message.contains(#"field "limit" is not used by \#(operation)"#) == true, "\(answer.line)")
                }
            }
        }
    }
}
