import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Nodes whose machines disagree on the time: one node's clock an hour ahead (libfaketime, as a machine whose
/// time service failed), the other right. What they record and answer must not depend on which one a
/// client reached.
extension ClusterTests {
    @Suite("Nodes whose clocks disagree")
    struct Clocks {
        /// Debian's libfaketime, which moves the wall clock of the process it is preloaded into.
        static func libfaketime() throws -> String {
            let found = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"]
                .map { $0 + "/faketime/libfaketime.so.1" }
                .first { FileManager.default.fileExists(atPath: $0) }
            return try #require(found, "libfaketime is not installed (apt-get install libfaketime; Tools/test.sh does it as root)")
        }

        /// A parser of the protocol's times (RFC 3339 with milliseconds); one per use, as it is not `Sendable`.
        static func parser() -> ISO8601DateFormatter {
            let parser = ISO8601DateFormatter()
            parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return parser
        }

        static func date(_ value: JSONValue?) throws -> Date {
            try #require(value?.stringValue.flatMap(parser().date(from:)), "not a time: \(String(describing: value))")
        }

        static func text(_ date: Date) -> String { parser().string(from: date) }

        @Test func aNodeWhoseClockIsAnHourAheadRecordsAndAnswersInTheDatabasesTime() throws {
            let url = try freshDatabase(on: SharedPostgres.server())
            let ahead = try ClusterNode(
                name: "ahead", url: url,
                environment: ["LD_PRELOAD": try Self.libfaketime(), "FAKETIME": "+1h", "FAKETIME_DONT_FAKE_MONOTONIC": "1"],
                settingsInEnvironment: true
            )
            let right = try ClusterNode(name: "right", url: url)

            // A grant on the node ahead is stamped with the database's time, not its own.
            let before = Date()
            let grant = try ahead.ok(#"{"op":"grant","user":"clocked","product":"p1","duration":"30d"}"#)
            let after = Date()
            let created = try Self.date(grant["membership"]?["createdAt"])
            #expect(created > before.addingTimeInterval(-2) && created < after.addingTimeInterval(2), "createdAt \(created), between \(before) and \(after)")
            let id = try #require(grant.membership?.id)

            // Revoked on the other node, once it holds the grant: never before it was created.
            try right.ok(#"{"op":"check","user":"clocked","minSeq":\#(grant.sequence ?? 0)}"#)
            let revoke = try right.ok(#"{"op":"revoke","membership":"\#(id)","reason":"refund"}"#)
            let revoked = try Self.date(revoke["membership"]?["revokedAt"])
            #expect(revoked >= created, "revokedAt \(revoked) before createdAt \(created)")
            let seq = try #require(revoke.sequence)

            // The past and the present as both nodes see them, at the moments around the two changes.
            for moment in [
                created.addingTimeInterval(-0.001), created, revoked.addingTimeInterval(-0.001), revoked, Date(), Date().addingTimeInterval(1800),
                Date().addingTimeInterval(7200),
            ] {
                let at = Self.text(moment)
                let line = #"{"op":"memberships","user":"clocked","at":"\#(at)","minSeq":\#(seq)}"#
                let onAhead = try ahead.ok(line)
                let onRight = try right.ok(line)
                #expect(onAhead.line == onRight.line, "at \(at): \(onAhead.line) against \(onRight.line)")
                let check = #"{"op":"check","user":"clocked","product":"p1","at":"\#(at)","minSeq":\#(seq)}"#
                #expect(try ahead.ok(check).line == right.ok(check).line, "check at \(at)")
            }

            // The audit trail (both nodes hold the revoke: read with its minSeq above) is in the order of the
            // changes, the same on both nodes: the revoke is newest.
            let history = #"{"op":"history","user":"clocked"}"#
            let trail = try ahead.ok(history)
            #expect(trail.line == (try right.ok(history)).line)
            let actions = trail["history"]?.arrayValue?.compactMap { $0["action"]?.stringValue } ?? []
            #expect(actions == ["revoke", "grant"], "\(trail.line)")
            // Checking now: the same on both nodes (inactive: revoked).
            let now = #"{"op":"check","user":"clocked","product":"p1","minSeq":\#(seq)}"#
            #expect(try ahead.ok(now)["active"]?.boolValue == false)
            #expect(try right.ok(now)["active"]?.boolValue == false)

            // Each node measured its offset from the database's clock, and shows it.
            let aheadOffset = try #require(try ahead.ok(#"{"op":"stats"}"#)["replication"]?["clockOffsetSeconds"]?.doubleValue)
            #expect(abs(aheadOffset + 3600) < 5, "the node an hour ahead measured \(aheadOffset) s")
            let rightOffset = try #require(try right.ok(#"{"op":"stats"}"#)["replication"]?["clockOffsetSeconds"]?.doubleValue)
            #expect(abs(rightOffset) < 1, "the node on time measured \(rightOffset) s")
        }
    }
}
