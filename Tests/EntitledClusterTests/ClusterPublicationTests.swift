import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// What every node publishes of every committed change, and how writes share groups.
extension ClusterTests {
    @Suite("Cluster publication and groups")
    struct Publication {
        /// Every kind of change reaches the watchers of every node with the cause a standalone server gives,
        /// an erasure included (its memberships as revoked, `erased`).
        @Test func aWatcherOnAnotherNodeHearsOfEveryKindOfChangeAnErasureIncluded() throws {
            let url = try freshDatabase(on: SharedPostgres.server())
            let watcherNode = try ClusterNode(name: "watcher", url: url)
            let writerNode = try ClusterNode(name: "writer", url: url)
            let watch = try watcherNode.connect()
            defer { watch.close() }
            #expect(try watch.send(line: #"{"op":"watch","all":true}"#).isOK)
            let guest = try writerNode.ok(#"{"op":"grant","device":"dev-1","product":"p1","duration":"30d"}"#)
            let id = try #require(guest.membership?.id)
            try writerNode.ok(#"{"op":"claim","device":"dev-1","user":"erin"}"#)
            try writerNode.ok(#"{"op":"event","membership":"\#(id)","type":"cancellation","eventId":"ev-1","eventTime":"2026-01-01T00:00:00Z"}"#)
            try writerNode.ok(#"{"op":"grant","user":"erin","product":"p2"}"#)
            let erased = try writerNode.ok(#"{"op":"erase","user":"erin"}"#)
            #expect(erased.erased?.memberships == 2, "\(erased.line)")
            var causes: [String] = []
            var erasedMemberships: [MembershipInfo] = []
            while causes.count < 6, let push = try watch.nextPush(timeout: 10) {
                causes.append(push.cause ?? "?")
                if push.cause == "erase", let membership = push.membership { erasedMemberships.append(membership) }
            }
            #expect(causes == ["grant", "claim", "cancellation", "grant", "erase", "erase"], "\(causes)")
            #expect(erasedMemberships.count == 2 && erasedMemberships.allSatisfy { $0.status == "revoked" }, "\(erasedMemberships)")
        }

        /// A client that pipelines writes on one connection gets them committed together, not one group
        /// each, and answered in order with increasing change numbers.
        @Test func writesPipelinedOnOneConnectionShareAGroup() throws {
            let url = try freshDatabase(on: SharedPostgres.server())
            let node = try ClusterNode(name: "pipelined", url: url)
            try node.ok(#"{"op":"grant","user":"warm-up","product":"p1"}"#)
            let before = try node.ok(#"{"op":"stats"}"#)["replication"]?["groupsCommitted"]?.intValue ?? 0
            let lines = (0..<16).map { #"{"op":"grant","user":"piped-\#($0)","product":"p1","id":\#($0)}"# }
                + [#"{"op":"check","user":"piped-15","product":"p1","id":16}"#]
            let answers = try node.pipeline(lines)
            #expect(answers.count == 17)
            var lastSeq: UInt64 = 0
            for (index, answer) in answers.prefix(16).enumerated() {
                #expect(answer.isOK && answer["id"]?.intValue == index, "\(answer.line)")
                let seq = answer.sequence ?? 0
                #expect(seq > lastSeq, "\(answer.line)")
                lastSeq = seq
            }
            // A read pipelined after them on the same connection sees every one of them.
            #expect(answers[16]["active"]?.boolValue == true, "\(answers[16].line)")
            let after = try node.ok(#"{"op":"stats"}"#)["replication"]?["groupsCommitted"]?.intValue ?? 0
            #expect(after - before <= 4, "16 pipelined writes took \(after - before) groups")
        }

        /// A node stopped for longer than the change retention while the others write and snapshot comes
        /// back from the newest snapshot and the changes after it, and holds everything.
        @Test func aNodeAwayLongerThanTheChangeRetentionComesBackFromTheSnapshot() throws {
            let url = try freshDatabase(on: SharedPostgres.server())
            let arguments = ["--change-retention", "1"]
            let sleeper = try ClusterNode(name: "sleeper", url: url, arguments: arguments)
            let writer = try ClusterNode(name: "writer", url: url, arguments: arguments)
            try writer.ok(#"{"op":"grant","user":"before","product":"p1"}"#)
            #expect(try eventually(10) { try sleeper.send(#"{"op":"check","user":"before","product":"p1"}"#)["active"]?.boolValue == true })
            sleeper.pause()
            defer { sleeper.resume() }
            for index in 0..<20 { try writer.ok(#"{"op":"grant","user":"away-\#(index)","product":"p1"}"#) }
            // Older than the retention, then covered by a snapshot: the changes the sleeper needs are gone.
            Thread.sleep(forTimeInterval: 1.5)
            try writer.ok(#"{"op":"grant","user":"last","product":"p1"}"#)
            let snapshot = try writer.ok(#"{"op":"snapshot"}"#)
            let covered = try #require(snapshot["sequence"]?.intValue)
            let remaining = try SharedPostgres.server().psql("SELECT count(*) FROM entitled.changes WHERE seq <= \(covered)", url: url)
            #expect(Int(remaining.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 < covered, "no change was removed")
            let after = try writer.ok(#"{"op":"grant","user":"after","product":"p1"}"#)
            sleeper.resume()
            let seq = try #require(after.sequence)
            for user in ["before", "last", "after"] + (0..<20).map({ "away-\($0)" }) {
                #expect(try sleeper.ok(#"{"op":"check","user":"\#(user)","product":"p1","minSeq":\#(seq)}"#)["active"]?.boolValue == true, "\(user)")
            }
            let stats = try sleeper.ok(#"{"op":"stats"}"#)
            #expect(stats["replication"]?["snapshotSequence"]?.intValue == covered, "\(stats.line)")
        }
    }
}
