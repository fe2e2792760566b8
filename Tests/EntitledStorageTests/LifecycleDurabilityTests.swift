import EntitledCore
import Foundation
import Testing

@testable import EntitledStorage

/// What format version 2 added, through real data directories: lifecycles, events, idempotency keys and
/// the audit trail survive a restart, from the log and from a snapshot; version 1 snapshots still load.
@Suite struct LifecycleDurabilityTests {
    /// Writes a store with every kind of version 2 data into `directory` and returns what a reader should
    /// find: the membership's id and the user's trail.
    func writeLifecycleHistory(in directory: String, snapshotAfterwards: Bool) throws -> (MembershipID, [AuditEntry]) {
        let durable = try DurableStore(directory: directory, policy: .always)
        defer { durable.close() }
        let store = durable.store
        let grant = Grant(
            subject: .device("phone"), productId: "prod_pro", expiry: .after(.days(7)),
            terms: PurchaseTerms(willRenew: true, periodType: .trial, environment: .sandbox),
            transaction: Grant.Transaction(id: "tx_1"), idempotencyKey: "order-1"
        )
        let membership = try store.grant(grant, by: ChangeAuthor(actor: "importer", reason: "migration")).value
        _ = try store.claim(device: "phone", user: "alice", by: ChangeAuthor(reason: "login"))
        try store.define(entitlement: "pro", products: ["prod_pro"], by: ChangeAuthor(reason: "launch"))
        let now = store.now()
        _ = try store.apply(
            LifecycleEvent(id: "evt_1", time: now, kind: .renewal(expiresAt: now.adding(.days(30))), transactionId: "tx_2"),
            to: membership.id, by: ChangeAuthor(reason: "webhook")
        )
        _ = try store.apply(
            LifecycleEvent(id: "evt_2", time: now, kind: .billingIssue(gracePeriodExpiresAt: now.adding(.days(40)))), to: membership.id
        )
        if snapshotAfterwards { _ = try durable.snapshot() }
        return (membership.id, try store.historyPage(of: .user("alice"), limit: 100).entries)
    }

    func expectRestored(from directory: String, id: MembershipID, trail: [AuditEntry]) throws {
        let reopened = try DurableStore(directory: directory, policy: .always)
        defer { reopened.close() }
        let store = reopened.store
        let membership = try #require(store.membership(withID: id))
        #expect(membership.lifecycle.periodType == .normal)  // the renewal ended the trial
        #expect(membership.lifecycle.environment == .sandbox)
        #expect(membership.lifecycle.renewsCount == 1)
        #expect(membership.lifecycle.billingIssueDetectedAt != nil)
        #expect(membership.lifecycle.transactions.map(\.id) == ["tx_1", "tx_2"])
        #expect(membership.lifecycle.appliedEventIDs == ["evt_1", "evt_2"])
        #expect(try store.historyPage(of: .user("alice"), limit: 100).entries == trail)
        #expect(store.historyPage(ofEntitlement: "pro", limit: 10).entries.first?.context.reason == "launch")
        let retried = try store.grant(
            Grant(subject: .device("phone"), productId: "prod_pro", expiry: .after(.days(7)), idempotencyKey: "order-1")
        )
        #expect(retried.isReplay)
        #expect(retried.value.id == id)
        // A redelivered event is still a duplicate after the restart.
        let redelivered = try store.apply(LifecycleEvent(id: "evt_1", time: store.now(), kind: .cancellation), to: id)
        #expect(redelivered.value.outcome == .ignored(.duplicate))
    }

    @Test func lifecycleEventsKeysAndTheAuditTrailSurviveARestartFromTheLog() throws {
        try withScratchDirectory { directory in
            let (id, trail) = try writeLifecycleHistory(in: directory, snapshotAfterwards: false)
            #expect(trail.map(\.actionName) == ["billing_issue", "renewal", "claim", "grant"])
            try expectRestored(from: directory, id: id, trail: trail)
        }
    }

    @Test func lifecycleEventsKeysAndTheAuditTrailSurviveARestartFromASnapshot() throws {
        try withScratchDirectory { directory in
            let (id, trail) = try writeLifecycleHistory(in: directory, snapshotAfterwards: true)
            let files = try FileManager.default.contentsOfDirectory(atPath: directory)
            #expect(files.contains { $0.hasPrefix(SnapshotFormat.prefix) && $0.hasSuffix(SnapshotFormat.suffix) })
            try expectRestored(from: directory, id: id, trail: trail)
            // And a second generation: the snapshot written by the restored store holds the same.
            do {
                let again = try DurableStore(directory: directory, policy: .always)
                _ = try again.snapshot()
                again.close()
            }
            try expectRestored(from: directory, id: id, trail: trail)
        }
    }

    @Test func aVersion1SnapshotStillLoads() throws {
        try withScratchDirectory { directory in
            var body = BinaryWriter()
            body.write(UInt32(1))  // one entitlement
            body.write("pro")
            body.write(UInt32(1))
            body.write("prod_pro")
            body.write(UInt64(1))  // one membership, version 1 layout: no lifecycle byte
            body.write(MembershipID(rawValue: "mem_0k3n5q8r2t4v6"))
            body.write("prod_pro")
            body.write(String?.none)
            body.write(String?.none)
            body.write(String?("alice"))
            body.write(Int64(1_704_067_200_000))
            body.write(Timestamp?.none)
            body.write(UInt8(5))  // manual
            body.write(UInt8(0))  // not revoked
            try OldSnapshotFile.write(version: 1, body: body.bytes, sequence: 1, into: directory)

            let durable = try DurableStore(directory: directory, policy: .always)
            defer { durable.close() }
            #expect(durable.store.sequence == 1)
            #expect(try durable.store.check(AccessQuery(subject: .user("alice"), filter: .entitlement("pro"))) == .active(until: nil))
            let entry = try #require(try durable.store.historyPage(of: .user("alice"), limit: 10).entries.first)
            #expect(entry.actionName == "grant")
            #expect(entry.context.recordedAt == Timestamp(millisecondsSinceEpoch: 1_704_067_200_000))
        }
    }
}
