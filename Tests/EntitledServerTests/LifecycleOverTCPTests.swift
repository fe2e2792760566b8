import EntitledCore
import Foundation
import Testing

@Suite("Lifecycle events, views, audit and watch over a real TCP connection")
struct LifecycleOverTCPTests {
    @Test func anEventIsAppliedOnceAndItsAnswerCarriesTheMembershipAfterIt() async throws {
        try await withTestServer { server in
            let connection = try server.connect()
            let grant = try connection.request(#"{"op":"grant","user":"u1","product":"prod_pro","duration":"30d","willRenew":true}"#)
            let id = try #require(grant.membershipID)
            let event = #"{"op":"event","membership":"\#(id)","type":"cancellation","eventId":"evt_1","eventTime":"2026-01-01T00:00:00Z","id":7}"#
            let applied = try connection.request(event)
            #expect(applied.ok == true)
            #expect(applied["id"] as? Int == 7)
            #expect(applied["applied"] as? Bool == true)
            #expect(applied.membership?["status"] as? String == "canceled")
            #expect(applied.membership?["isActive"] as? Bool == true)
            #expect(applied.membership?["renewState"] as? String == "canceled")
            let again = try connection.request(event)
            #expect(again["applied"] as? Bool == false)
            #expect(again["reason"] as? String == "duplicate")
            let older = try connection.request(
                #"{"op":"event","membership":"\#(id)","type":"uncancellation","eventId":"evt_0","eventTime":"2025-12-01T00:00:00Z"}"#)
            #expect(older["reason"] as? String == "out_of_order")
            let unknown = try connection.request(
                #"{"op":"event","membership":"mem_0000000000000","type":"pause","eventId":"e","eventTime":"2026-01-01T00:00:00Z"}"#)
            #expect(unknown.errorCode == "not_found")
        }
    }

    @Test func aRetriedGrantReturnsTheFirstMembershipAndAReusedKeyIsAConflict() async throws {
        try await withTestServer { server in
            let connection = try server.connect()
            let line = #"{"op":"grant","device":"d1","product":"prod_pro","idempotencyKey":"order-1"}"#
            let first = try connection.request(line)
            let retried = try connection.request(line)
            #expect(retried.membershipID == first.membershipID)
            #expect(first["idempotentReplay"] == nil)
            #expect(retried["idempotentReplay"] as? Bool == true)
            let conflict = try connection.request(#"{"op":"grant","device":"d1","product":"prod_other","idempotencyKey":"order-1"}"#)
            #expect(conflict.errorCode == "conflict")
            #expect(server.store.membershipCount == 1)
        }
    }

    @Test func customerAndHistoryAnswerTheSubjectsViewAndTrail() async throws {
        try await withTestServer { server in
            let connection = try server.connect()
            _ = try connection.request(#"{"op":"define","entitlement":"pro","products":["prod_pro"],"reason":"launch"}"#)
            let grant = try connection.request(#"{"op":"grant","device":"d1","product":"prod_pro","duration":"30d"}"#)
            _ = try connection.request(#"{"op":"claim","device":"d1","user":"u1","reason":"login"}"#)
            _ = try connection.request(#"{"op":"revoke","membership":"\#(grant.membershipID!)","reason":"chargeback"}"#)

            let customer = try connection.request(#"{"op":"customer","user":"u1"}"#)
            let info = try #require(customer["customer"] as? [String: Any])
            #expect((info["entitlements"] as? [String: Any])?.isEmpty == true)  // the only membership was revoked
            #expect(info["activeProducts"] as? [String] == [])
            #expect(info["requestDate"] is String)

            let history = try connection.request(#"{"op":"history","user":"u1"}"#)
            let entries = try #require(history["history"] as? [[String: Any]])
            #expect(entries.map { $0["action"] as? String } == ["revoke", "claim", "grant"])
            #expect(entries.map { $0["reason"] as? String } == ["chargeback", "login", nil])
            #expect(entries.allSatisfy { $0["actor"] as? String == "local" })
            let catalogTrail = try connection.request(#"{"op":"history","entitlement":"pro"}"#)
            #expect((catalogTrail["history"] as? [[String: Any]])?.first?["reason"] as? String == "launch")
        }
    }

    @Test func aWatcherIsPushedTheChangesOfItsSubjectAndNothingElse() async throws {
        try await withTestServer(eventLoops: 2) { server in
            let watcher = try server.connect()
            let writer = try server.connect()
            let watch = try watcher.request(#"{"op":"watch","user":"u1"}"#)
            #expect(watch["watches"] as? Int == 1)

            let grant = try writer.request(#"{"op":"grant","user":"u1","product":"prod_pro","duration":"30d"}"#)
            let pushed = try JSONObject(line: try #require(try watcher.readLine()))
            #expect(pushed["push"] as? String == "access")
            #expect(pushed["cause"] as? String == "grant")
            #expect(pushed.ok == nil)
            #expect(pushed.membershipID == grant.membershipID)
            #expect(pushed["sequence"] as? Int == 1)

            _ = try writer.request(#"{"op":"grant","user":"someone-else","product":"prod_pro"}"#)
            _ = try writer.request(
                #"{"op":"event","membership":"\#(grant.membershipID!)","type":"pause","eventId":"e1","eventTime":"2026-01-01T00:00:00Z"}"#)
            let paused = try JSONObject(line: try #require(try watcher.readLine()))
            #expect(paused["cause"] as? String == "pause")
            #expect(paused["sequence"] as? Int == 3)
            #expect(paused.membership?["status"] as? String == "paused")

            let unwatch = try watcher.request(#"{"op":"unwatch"}"#)
            #expect(unwatch["watches"] as? Int == 0)
            _ = try writer.request(#"{"op":"revoke","membership":"\#(grant.membershipID!)"}"#)
            // Nothing was pushed for the other user or after the unwatch: the next line is the ping's answer.
            #expect(try watcher.request(#"{"op":"ping","id":"after"}"#)["id"] as? String == "after")
        }
    }

    @Test func aWatcherOfEverySubjectIsToldOfAClaimOnAnyDevice() async throws {
        try await withTestServer { server in
            let watcher = try server.connect()
            let writer = try server.connect()
            _ = try writer.request(#"{"op":"grant","device":"d9","product":"prod_pro"}"#)
            #expect(try watcher.request(#"{"op":"watch","all":true}"#)["watches"] as? Int == 1)
            _ = try writer.request(#"{"op":"claim","device":"d9","user":"u9"}"#)
            let pushed = try JSONObject(line: try #require(try watcher.readLine()))
            #expect(pushed["cause"] as? String == "claim")
            #expect(pushed.membership?["user"] as? String == "u9")
        }
    }

    @Test func aWatcherIsPushedTheExpiryAtTheMomentAMembershipRunsOutByItself() async throws {
        try await withTestServer { server in
            let watcher = try server.connect()
            let writer = try server.connect()
            // Watched before the grant exists: the grant's push arms the timer.
            _ = try watcher.request(#"{"op":"watch","device":"d1"}"#)
            let expiry = server.store.now().adding(TimeSpan(milliseconds: 600))
            _ = try writer.request(#"{"op":"grant","device":"d1","product":"prod_pro","expiresAt":"\#(expiry.rfc3339)"}"#)
            // Already active before the watch: the watch arms its timer.
            let other = try server.connect()
            _ = try other.request(#"{"op":"watch","device":"d1"}"#)

            for connection in [watcher, other] {
                var lines: [JSONObject] = []
                while let line = try connection.readLine() {
                    lines.append(try JSONObject(line: line))
                    if lines.last?["cause"] as? String == "expired" { break }
                }
                let expired = try #require(lines.last)
                #expect(expired["cause"] as? String == "expired")
                #expect(expired.membership?["status"] as? String == "expired")
                #expect(server.store.now() >= expiry)
            }
            #expect(try writer.request(#"{"op":"check","device":"d1"}"#).active == false)
        }
    }

    @Test func aConnectionMayHoldAtMostTheWatchLimit() async throws {
        try await withTestServer { server in
            let connection = try server.connect()
            var batch = ""
            for index in 0..<1000 { batch += #"{"op":"watch","user":"u\#(index)"}"# + "\n" }
            try connection.send(batch)
            for _ in 0..<1000 { _ = try connection.readLine() }
            let refused = try connection.request(#"{"op":"watch","user":"one-more"}"#)
            #expect(refused.errorCode == "bad_request")
            #expect(try connection.request(#"{"op":"watch","user":"u5"}"#)["watches"] as? Int == 1000)
        }
    }
}

extension LifecycleOverTCPTests {
    /// A watcher often leaves pushed lines unread when it goes; its connection then ends in a reset, and
    /// the failed read must close that connection, not stop the server (it trapped on the negative count).
    @Test func clientsThatCloseWithAnswersUnreadLeaveTheServerServingOthers() async throws {
        try await withTestServer { server in
            for round in 0..<10 {
                let connection = try server.connect()
                try connection.send(String(repeating: #"{"op":"ping"}"# + "\n", count: 50))
                // The answers arrive and stay unread: closing now sends a reset, not an orderly end.
                try await Task.sleep(for: .milliseconds(20))
                if round % 2 == 0 { connection.reset() }  // else closed by deinit
            }
            try await Task.sleep(for: .milliseconds(100))
            #expect(try server.connect().request(#"{"op":"ping"}"#).ok == true)
        }
    }

    @Test func membershipsAtAPastMomentListWhatTheSubjectSawThen() async throws {
        try await withTestServer { server in
            let connection = try server.connect()
            let before = server.store.now().adding(TimeSpan(milliseconds: -1)).rfc3339
            try await Task.sleep(for: .milliseconds(5))
            let grant = try connection.request(#"{"op":"grant","device":"d1","product":"prod_pro","duration":"30d"}"#)
            let created = try #require(grant.membership?["createdAt"] as? String)
            try await Task.sleep(for: .milliseconds(5))  // the claim a few milliseconds after the creation
            _ = try connection.request(#"{"op":"claim","device":"d1","user":"u1"}"#)
            try await Task.sleep(for: .milliseconds(5))

            func listed(_ subject: String, at moment: String) throws -> [[String: Any]] {
                try #require(try connection.request(#"{"op":"memberships",\#(subject),"at":"\#(moment)"}"#)["memberships"] as? [[String: Any]])
            }
            #expect(try listed(#""device":"d1""#, at: before).isEmpty)
            #expect(try listed(#""device":"d1""#, at: created).count == 1)
            #expect(try listed(#""user":"u1""#, at: created).isEmpty)
            #expect(try listed(#""user":"u1""#, at: server.store.now().rfc3339).count == 1)
        }
    }
}

extension LifecycleOverTCPTests {
    @Test func aDeviceWatchArmsTheTimerOfAMembershipBoughtOnTheDeviceAndClaimedSince() async throws {
        try await withTestServer { server in
            let writer = try server.connect()
            let expiry = server.store.now().adding(TimeSpan(milliseconds: 500))
            _ = try writer.request(#"{"op":"grant","device":"d2","product":"prod_pro","expiresAt":"\#(expiry.rfc3339)"}"#)
            _ = try writer.request(#"{"op":"claim","device":"d2","user":"u2"}"#)
            let watcher = try server.connect()
            _ = try watcher.request(#"{"op":"watch","device":"d2"}"#)
            let expired = try JSONObject(line: try #require(try watcher.readLine()))
            #expect(expired["cause"] as? String == "expired")
            #expect(expired.membership?["user"] as? String == "u2")
        }
    }

    @Test func aCheckAMillisecondBehindTheServerSeesThePresentAndOneBeforeAChangeSeesThePast() async throws {
        try await withTestServer { server in
            let connection = try server.connect()
            let beforeGrant = server.store.now().adding(TimeSpan(milliseconds: -1)).rfc3339
            try await Task.sleep(for: .milliseconds(3))
            _ = try connection.request(#"{"op":"grant","user":"u3","product":"prod_pro"}"#)
            try await Task.sleep(for: .milliseconds(3))
            let justBehind = server.store.now().adding(TimeSpan(milliseconds: -1)).rfc3339
            #expect(try connection.request(#"{"op":"check","user":"u3","at":"\#(justBehind)"}"#).active == true)
            #expect(try connection.request(#"{"op":"check","user":"u3","at":"\#(beforeGrant)"}"#).active == false)
        }
    }
}

extension LifecycleOverTCPTests {
    /// 1,100 timers left behind by an unwatch pass the sweep's threshold; the sweep must keep the timers
    /// that still wait (a second watcher's).
    @Test func sweepingTheTimersAWatcherLeftKeepsTheTimersOthersWaitFor() async throws {
        try await withTestServer(eventLoops: 1) { server in
            let writer = try server.connect()
            var batch = ""
            for index in 0..<1100 { batch += #"{"op":"grant","user":"bulk\#(index)","product":"prod_pro","duration":"30d"}"# + "\n" }
            try writer.send(batch)
            for _ in 0..<1100 { _ = try writer.readLine() }
            let expiry = server.store.now().adding(TimeSpan(milliseconds: 700))
            _ = try writer.request(#"{"op":"grant","user":"soon","product":"prod_pro","expiresAt":"\#(expiry.rfc3339)"}"#)

            let staying = try server.connect()
            #expect(try staying.request(#"{"op":"watch","user":"soon"}"#)["watches"] as? Int == 1)
            let leaving = try server.connect()
            #expect(try leaving.request(#"{"op":"watch","all":true}"#)["watches"] as? Int == 1)
            #expect(try leaving.request(#"{"op":"unwatch"}"#)["watches"] as? Int == 0)

            let expired = try JSONObject(line: try #require(try staying.readLine()))
            #expect(expired["cause"] as? String == "expired")
            #expect(expired.membership?["user"] as? String == "soon")
        }
    }
}

@Suite("Versioning over a real TCP connection")
struct HelloOverTCPTests {
    @Test func helloAnswersTheProtocolVersionTheServerAndEveryOperation() async throws {
        try await withTestServer { server in
            let hello = try server.connect().request(#"{"op":"hello","id":1}"#)
            #expect(hello.ok == true)
            #expect(hello["protocol"] as? Int == 1)
            #expect((hello["server"] as? String)?.hasPrefix("entitled ") == true)
            let operations = try #require(hello["operations"] as? [String])
            #expect(operations.contains("check"))
            #expect(operations.contains("hello"))
            #expect(Set(operations).count == operations.count)
            // Every operation it names is one it answers: none is refused as unknown.
            let connection = try server.connect()
            for operation in operations {
                #expect(try connection.request(#"{"op":"\#(operation)"}"#).errorCode != "unknown_op", "\(operation)")
            }
        }
    }
}
