import EntitledCore
import Foundation
import Testing

@testable import EntitledStorage

/// What format version 6 added, through real data directories: a refund's reversal survives a restart from
/// the log and from a snapshot, with access back and both audit entries.
@Suite struct RefundReversalDurabilityTests {
    func writeReversal(in directory: String, snapshotAfterwards: Bool) throws -> Membership {
        let durable = try DurableStore(directory: directory, policy: .always)
        defer { durable.close() }
        let store = durable.store
        let granted = try store.grant(Grant(subject: .user("alice"), productId: "prod_pro", expiry: .after(.days(30)))).value
        let now = Timestamp(millisecondsSinceEpoch: Int64(Date().timeIntervalSince1970 * 1000))
        _ = try store.apply(LifecycleEvent(id: "evt_refund", time: now, kind: .refund), to: granted.id)
        let reversed = try store.apply(LifecycleEvent(id: "evt_reversal", time: now, kind: .refundReversal), to: granted.id).value.membership
        #expect(reversed.revocation == nil)
        if snapshotAfterwards { _ = try durable.snapshot() }
        return reversed
    }

    func expectRestored(from directory: String, _ written: Membership) throws {
        let reopened = try DurableStore(directory: directory, policy: .always)
        defer { reopened.close() }
        let store = reopened.store
        #expect(store.membership(withID: written.id) == written)
        #expect(try store.check(AccessQuery(subject: .user("alice"), filter: .anyProduct)) == .active(until: written.expiresAt!))
        let entries = try store.historyPage(of: .user("alice"), limit: 10).entries
        #expect(entries.count == 3)
        guard case .membership(.event(let event), _) = entries.first?.change else {
            Issue.record("the newest entry is not an event: \(String(describing: entries.first))")
            return
        }
        #expect(event.kind == .refundReversal)
    }

    @Test func aRefundReversalSurvivesARestartFromTheLog() throws {
        try withScratchDirectory { directory in
            try expectRestored(from: directory, try writeReversal(in: directory, snapshotAfterwards: false))
        }
    }

    @Test func aRefundReversalSurvivesARestartFromASnapshot() throws {
        try withScratchDirectory { directory in
            try expectRestored(from: directory, try writeReversal(in: directory, snapshotAfterwards: true))
        }
    }

    @Test func aVersion5SegmentHoldingARefundReversalIsCorrupt() {
        let event = LifecycleEvent(id: "evt_rr", time: Timestamp(millisecondsSinceEpoch: 1_800_000_000_000), kind: .refundReversal)
        let membership = Membership(id: MembershipID(rawValue: "mem_0k3n5q8r2t4v6"), productId: "p", user: "u", createdAt: Timestamp(millisecondsSinceEpoch: 1))
        let change = StoreChange.event(event, result: membership)
        var writer = BinaryWriter(capacity: 256)
        writer.write(LoggedChange(sequence: 1, change: change, context: ChangeContext(recordedAt: Timestamp(millisecondsSinceEpoch: 0))))
        writer.bytes.withUnsafeBytes { bytes in
            var version5 = BinaryReader(bytes)
            #expect(throws: BinaryReader.Malformed.self) { _ = try version5.readLoggedChange(version: 5) }
            var version6 = BinaryReader(bytes)
            #expect((try? version6.readLoggedChange(version: 6))?.change == change)
        }
    }

    @Test func aVersion5SnapshotHoldingARefundReversalRevisionIsCorrupt() {
        let revision = MembershipRevision(
            sequence: 2, context: ChangeContext(recordedAt: Timestamp(millisecondsSinceEpoch: 5)),
            action: .event(LifecycleEvent(id: "evt_rr", time: Timestamp(millisecondsSinceEpoch: 5), kind: .refundReversal)),
            effectiveAt: Timestamp(millisecondsSinceEpoch: 5),
            before: Membership(id: MembershipID(rawValue: "mem_0k3n5q8r2t4v6"), productId: "p", user: "u", createdAt: Timestamp(millisecondsSinceEpoch: 1))
        )
        var writer = BinaryWriter(capacity: 256)
        writer.write(revision)
        writer.bytes.withUnsafeBytes { bytes in
            var version5 = BinaryReader(bytes)
            #expect(throws: BinaryReader.Malformed.self) { _ = try version5.readRevision(version: 5) }
            var version6 = BinaryReader(bytes)
            #expect((try? version6.readRevision(version: 6)) == revision)
        }
    }
}
