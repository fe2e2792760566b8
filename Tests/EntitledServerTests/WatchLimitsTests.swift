import EntitledClient
import EntitledCore
import EntitledServer
import Foundation
import Testing

/// What a `watch` may cost and hold (issue #44): a bounded number of connections watching every subject,
/// and `expired` pushes from the store's one schedule of access ends, told once each to every watcher
/// of them however many end at one moment.
@Suite struct WatchLimitsTests {
    @Test func atMostSixteenConnectionsWatchEverySubjectAndAPlaceFreesWhenOneLeaves() async throws {
        try await withTestServer { server in
            var watchers: [EntitledAsyncConnection] = []
            for _ in 0..<16 {
                let watcher = try await server.connect()
                #expect(try await watcher.send(line: #"{"op":"watch","all":true}"#)["watches"] == .number("1"))
                watchers.append(watcher)
            }
            let seventeenth = try await server.connect()
            let refused = try await seventeenth.send(line: #"{"op":"watch","all":true}"#)
            #expect(refused.errorCode == "over_limit")
            #expect(refused.error?.message.contains("16 connections watch every subject") == true)
            // A watch of given subjects is not counted, and a watcher of everyone watching again is no new one.
            #expect(try await seventeenth.send(line: #"{"op":"watch","user":"alice"}"#)["watches"] == .number("1"))
            #expect(try await watchers[0].send(line: #"{"op":"watch","all":true}"#)["watches"] == .number("1"))
            #expect(try await watchers[1].send(line: #"{"op":"unwatch","all":true}"#)["watches"] == .number("0"))
            #expect(try await seventeenth.send(line: #"{"op":"watch","all":true}"#)["watches"] == .number("2"))
            // A watcher that closes leaves its place too.
            await watchers[2].close()
            let eighteenth = try await server.connect()
            var answer = try await eighteenth.send(line: #"{"op":"watch","all":true}"#)
            for _ in 0..<300 where answer.errorCode == "over_limit" {
                // The close reaches the server's loop a moment after the client's side is done.
                try await Task.sleep(for: .milliseconds(100))
                answer = try await eighteenth.send(line: #"{"op":"watch","all":true}"#)
            }
            #expect(answer["watches"] == .number("1"))
        }
    }

    @Test func thousandsOfMembershipsEndingAtOneMomentArePushedOnceEachToTheirWatchers() async throws {
        try await withTestServer { server in
            let writer = try await server.connect()
            // 3,000 ends at one moment: more than one loop turn takes (1,024), so they come in several.
            // The watches must be set before that moment; on a machine too busy for it, a later one is tried.
            for (attempt, ahead) in [8_000, 30_000].enumerated() {
                let end = server.store.now().adding(TimeSpan(milliseconds: Int64(ahead)))
                var ids: Set<String> = []
                for index in 0..<3_000 {
                    let grant = try await writer.send(
                        line: #"{"op":"grant","user":"u\#(attempt)-\#(index % 100)","product":"prod_pro","expiresAt":"\#(end.rfc3339)"}"#
                    )
                    ids.insert(try #require(grant.membership?.id))
                }
                let everyone = try await server.connect()
                _ = try await everyone.send(line: #"{"op":"watch","all":true}"#)
                let one = try await server.connect()
                _ = try await one.send(line: #"{"op":"watch","user":"u\#(attempt)-7"}"#)
                guard server.store.now() < end else { continue }

                var told: [String] = []
                while told.count < ids.count, let push = await everyone.nextPush(within: .milliseconds(Int64(ahead)) + .seconds(30)) {
                    #expect(push.cause == "expired")
                    told.append(try #require(push.membership?.id))
                }
                #expect(told.count == ids.count)
                #expect(Set(told) == ids)
                let ownPush = try #require(await one.nextPush(within: .seconds(30)))
                #expect(ownPush.membership?.user == "u\(attempt)-7")
                // Nothing is told twice: a second's pushes after the last are none.
                try await Task.sleep(for: .seconds(1))
                #expect(await everyone.closeAndCollectUnreadPushes().isEmpty)
                let ownRest = await one.closeAndCollectUnreadPushes()
                #expect(ownRest.count == 29)  // 30 of the 3,000 are u…-7's
                #expect(ownRest.allSatisfy { $0.cause == "expired" && $0.membership?.user == "u\(attempt)-7" })
                return
            }
            Issue.record("every watch was answered after the memberships had ended: the machine is too busy to tell")
        }
    }
}
