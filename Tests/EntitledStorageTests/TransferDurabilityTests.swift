import EntitledCore
import Foundation
import Testing

@testable import EntitledStorage

/// What format version 4 added, through real data directories: a transfer survives a restart from the log
/// and from a snapshot, with both users' history; an older version's segment cannot hold one.
@Suite struct TransferDurabilityTests {
    /// Alice buys, Bob restores the purchase (moved to him), and Carol's guest purchase goes to Dan.
    func writeTransfers(in directory: String, snapshotAfterwards: Bool) throws -> (MembershipID, MembershipID) {
        let durable = try DurableStore(directory: directory, policy: .always)
        defer { durable.close() }
        let store = durable.store
        func purchase(_ subject: Subject, _ transaction: String) throws -> Recorded<Membership> {
            try store.grant(
                Grant(subject: subject, productId: "prod_pro", expiry: .after(.days(30)), transaction: Grant.Transaction(id: transaction)),
                by: ChangeAuthor(actor: "stores", reason: "restore")
            )
        }
        let alices = try purchase(.user("alice"), "1000").value
        Thread.sleep(forTimeInterval: 0.01)  // the transfer later than the purchase, so the past shows both
        #expect(try purchase(.user("bob"), "1000").transferredFrom == .user("alice"))
        let guest = try purchase(.device("carols-phone"), "2000").value
        #expect(try purchase(.user("dan"), "2000").transferredFrom == .device("carols-phone"))
        if snapshotAfterwards { _ = try durable.snapshot() }
        return (alices.id, guest.id)
    }

    func expectRestored(from directory: String, ids: (MembershipID, MembershipID)) throws {
        let reopened = try DurableStore(directory: directory, policy: .always)
        defer { reopened.close() }
        let store = reopened.store
        #expect(store.membershipCount == 2)
        #expect(store.membership(withID: ids.0)?.user == "bob")
        #expect(store.memberships(visibleTo: .user("alice")).isEmpty)
        #expect(try store.historyPage(of: .user("alice"), limit: 10).entries.map(\.actionName) == ["transfer", "grant"])
        #expect(try store.historyPage(of: .user("bob"), limit: 10).entries.first?.context.reason == "restore")
        #expect(store.formerOwner(of: ids.0) == .user("alice"))
        #expect(store.membership(withID: ids.1)?.user == "dan")
        #expect(store.memberships(visibleTo: .device("carols-phone")).isEmpty)
        #expect(try store.historyPage(of: .device("carols-phone"), limit: 10).entries.map(\.actionName) == ["transfer", "grant"])
        // Found by its transaction under its new owner; reported again for Bob, nothing new.
        #expect(store.memberships(withOriginalTransactionID: "1000").map(\.id) == [ids.0])
        #expect(try store.grant(Grant(subject: .user("bob"), productId: "prod_pro", transaction: Grant.Transaction(id: "1000"))).isReplay)
    }

    @Test func aTransferSurvivesARestartFromTheLog() throws {
        try withScratchDirectory { directory in
            let ids = try writeTransfers(in: directory, snapshotAfterwards: false)
            try expectRestored(from: directory, ids: ids)
        }
    }

    @Test func aTransferSurvivesARestartFromASnapshot() throws {
        try withScratchDirectory { directory in
            let ids = try writeTransfers(in: directory, snapshotAfterwards: true)
            try expectRestored(from: directory, ids: ids)
        }
    }

    @Test func aVersion3SegmentHoldingATransferKindIsCorrupt() {
        var writer = BinaryWriter(capacity: 64)
        let change = StoreChange.transfer(MembershipID(rawValue: "mem_0k3n5q8r2t4v6"), toUser: "bob")
        writer.write(LoggedChange(sequence: 1, change: change, context: ChangeContext(recordedAt: Timestamp(millisecondsSinceEpoch: 0))))
        writer.bytes.withUnsafeBytes { bytes in
            var version3 = BinaryReader(bytes)
            #expect(throws: BinaryReader.Malformed.self) { _ = try version3.readLoggedChange(version: 3) }
            var version4 = BinaryReader(bytes)
            #expect((try? version4.readLoggedChange(version: 4))?.change == change)
        }
    }
}
