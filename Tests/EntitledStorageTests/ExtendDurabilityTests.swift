import EntitledCore
import Foundation
import Testing

@testable import EntitledStorage

/// What format version 5 added, through real data directories: an extension survives a restart from the
/// log and from a snapshot, with its audit entry and the expiry before it; an older version cannot hold one.
@Suite struct ExtendDurabilityTests {
    struct Written {
        var id: MembershipID
        var previous: Timestamp
        var extended: Timestamp
    }

    func writeExtension(in directory: String, snapshotAfterwards: Bool) throws -> Written {
        let durable = try DurableStore(directory: directory, policy: .always)
        defer { durable.close() }
        let store = durable.store
        let granted = try store.grant(Grant(subject: .user("alice"), productId: "prod_pro", expiry: .after(.days(30)))).value
        let extended = try store.extend(granted.id, .by(.months(1)), by: ChangeAuthor(actor: "support", reason: "outage")).value
        if snapshotAfterwards { _ = try durable.snapshot() }
        return Written(id: granted.id, previous: extended.previousExpiresAt, extended: extended.membership.expiresAt!)
    }

    func expectRestored(from directory: String, _ written: Written) throws {
        let reopened = try DurableStore(directory: directory, policy: .always)
        defer { reopened.close() }
        let store = reopened.store
        #expect(store.membership(withID: written.id)?.expiresAt == written.extended)
        #expect(try store.check(AccessQuery(subject: .user("alice"), filter: .anyProduct)) == .active(until: written.extended))
        let entry = try #require(try store.historyPage(of: .user("alice"), limit: 10).entries.first)
        #expect(entry.context.actor == "support")
        #expect(entry.context.reason == "outage")
        #expect(entry.change == .membership(.extend(previousExpiresAt: written.previous), after: store.membership(withID: written.id)!))
    }

    @Test func anExtensionSurvivesARestartFromTheLog() throws {
        try withScratchDirectory { directory in
            try expectRestored(from: directory, try writeExtension(in: directory, snapshotAfterwards: false))
        }
    }

    @Test func anExtensionSurvivesARestartFromASnapshot() throws {
        try withScratchDirectory { directory in
            try expectRestored(from: directory, try writeExtension(in: directory, snapshotAfterwards: true))
        }
    }

    @Test func aVersion4SegmentHoldingAnExtendKindIsCorrupt() {
        var writer = BinaryWriter(capacity: 64)
        let change = StoreChange.extend(MembershipID(rawValue: "mem_0k3n5q8r2t4v6"), expiresAt: Timestamp(millisecondsSinceEpoch: 1_800_000_000_000))
        writer.write(LoggedChange(sequence: 1, change: change, context: ChangeContext(recordedAt: Timestamp(millisecondsSinceEpoch: 0))))
        writer.bytes.withUnsafeBytes { bytes in
            var version4 = BinaryReader(bytes)
            #expect(throws: BinaryReader.Malformed.self) { _ = try version4.readLoggedChange(version: 4) }
            var version5 = BinaryReader(bytes)
            #expect((try? version5.readLoggedChange(version: 5))?.change == change)
        }
    }

    @Test func aVersion4SnapshotHoldingAnExtendRevisionIsCorrupt() {
        let revision = MembershipRevision(
            sequence: 2, context: ChangeContext(recordedAt: Timestamp(millisecondsSinceEpoch: 5)),
            action: .extend(previousExpiresAt: Timestamp(millisecondsSinceEpoch: 7)), effectiveAt: Timestamp(millisecondsSinceEpoch: 5),
            before: Membership(id: MembershipID(rawValue: "mem_0k3n5q8r2t4v6"), productId: "p", user: "u", createdAt: Timestamp(millisecondsSinceEpoch: 1))
        )
        var writer = BinaryWriter(capacity: 128)
        writer.write(revision)
        writer.bytes.withUnsafeBytes { bytes in
            var version4 = BinaryReader(bytes)
            #expect(throws: BinaryReader.Malformed.self) { _ = try version4.readRevision(version: 4) }
            var version5 = BinaryReader(bytes)
            #expect((try? version5.readRevision(version: 5)) == revision)
        }
    }
}
