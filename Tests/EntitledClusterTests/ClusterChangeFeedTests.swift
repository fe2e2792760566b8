import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// The change feed of a cluster: every node answers `changes` alike, with the same numbers, whichever
/// node made the changes; a node that restarts from the database's snapshot still reaches as far back.
extension ClusterTests {
    @Suite("Cluster change feed")
    struct ChangeFeed {
        /// The (sequence, action, membership id) of every item of `node`'s feed after `after`.
        static func feed(of node: ClusterNode, after: UInt64 = 0) throws -> [String] {
            var items: [String] = []
            var position = after
            while true {
                let page = try node.ok(#"{"op":"changes","afterSeq":\#(position),"limit":7}"#)
                for item in page["changes"]?.arrayValue ?? [] {
                    items.append("\(item["sequence"]?.intValue ?? -1) \(item["action"]?.stringValue ?? "?") \(item["membership"]?["id"]?.stringValue ?? "-")")
                }
                let next = UInt64(page["next"]?.intValue ?? 0)
                if next >= UInt64(page["newest"]?.intValue ?? 0) { return items }
                position = next
            }
        }

        @Test func everyNodeAnswersTheSameFeedWhicheverNodeWroteAndAfterARestartFromTheSnapshot() throws {
            let url = try freshDatabase(on: SharedPostgres.server())
            let first = try ClusterNode(name: "first", url: url)
            let second = try ClusterNode(name: "second", url: url)
            var last: UInt64 = 0
            for index in 0..<12 {
                let writer = index % 2 == 0 ? first : second
                last = try #require(try writer.ok(#"{"op":"grant","user":"u\#(index % 4)","product":"p\#(index % 3)"}"#).sequence)
            }
            let guest = try first.ok(#"{"op":"grant","device":"dev","product":"p9"}"#)
            _ = guest
            try second.ok(#"{"op":"claim","device":"dev","user":"u1"}"#)
            last = try #require(try first.ok(#"{"op":"define","entitlement":"pro","products":["p1"]}"#).sequence)
            // The second node reads once it applied the last change (a read with minSeq waits for it).
            try second.ok(#"{"op":"check","user":"u0","minSeq":\#(last)}"#)
            let seen = try Self.feed(of: first)
            #expect(seen.count == 15, "\(seen)")
            #expect(try Self.feed(of: second) == seen)

            // A snapshot in the database, then a node started again from it: the feed reaches as far back.
            try first.ok(#"{"op":"snapshot"}"#)
            last = try #require(try second.ok(#"{"op":"erase","user":"u3"}"#).sequence)
            second.stop()
            try second.start()
            try second.ok(#"{"op":"check","user":"u0","minSeq":\#(last)}"#)
            try first.ok(#"{"op":"check","user":"u0","minSeq":\#(last)}"#)
            let afterRestart = try Self.feed(of: second)
            #expect(afterRestart == (try Self.feed(of: first)))
            // u3's grants left the feed with the erasure; everything else stays, and the erasure is last.
            #expect(afterRestart.count == seen.count - 3 + 1, "\(afterRestart)")
            #expect(afterRestart.last?.contains("erase") == true)
        }
    }
}
