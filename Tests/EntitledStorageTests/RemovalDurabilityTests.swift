import EntitledCore
import Foundation
import Testing

@testable import EntitledStorage

/// What format version 3 added, through real data directories: undefine and erase records, the catalog
/// revisions' action and the erasures survive a restart, from the log and from a snapshot; a snapshot holds
/// nothing of an erased person.
@Suite struct RemovalDurabilityTests {
    /// Defines and undefines an entitlement, grants to a person and another user, erases the person.
    func writeRemovals(in directory: String, snapshotAfterwards: Bool) throws -> MembershipID {
        let durable = try DurableStore(directory: directory, policy: .always)
        defer { durable.close() }
        let store = durable.store
        try store.define(entitlement: "beta", products: ["prod_beta"])
        _ = try store.undefine(entitlement: "beta", by: ChangeAuthor(actor: "ops", reason: "ended"))
        _ = try store.grant(Grant(subject: .device("phone-of-erin"), productId: "prod_pro", idempotencyKey: "order-of-erin"))
        _ = try store.claim(device: "phone-of-erin", user: "erin")
        let kept = try store.grant(Grant(subject: .user("frank"), productId: "prod_pro"), by: ChangeAuthor(actor: "ops", reason: "kept")).value
        _ = try store.erase(Subject(user: "erin", device: "phone-of-erin")!, by: ChangeAuthor(actor: "dpo", reason: "ticket 7"))
        if snapshotAfterwards { _ = try durable.snapshot() }
        return kept.id
    }

    func expectRestored(from directory: String, kept: MembershipID) throws {
        let reopened = try DurableStore(directory: directory, policy: .always)
        defer { reopened.close() }
        let store = reopened.store
        #expect(store.catalog().isEmpty)
        #expect(store.historyPage(ofEntitlement: "beta", limit: 10).entries.map(\.actionName) == ["undefine", "define"])
        #expect(store.historyPage(ofEntitlement: "beta", limit: 10).entries.first?.change == .catalogRemoval(entitlement: "beta", products: ["prod_beta"]))
        #expect(store.memberships(visibleTo: .user("erin")).isEmpty)
        #expect(try store.historyPage(of: .device("phone-of-erin"), limit: 10).entries.isEmpty)
        #expect(store.membership(withID: kept)?.user == "frank")
        #expect(store.membershipCount == 1)
        let erasure = try #require(store.erasures(limit: 10).first)
        #expect(erasure.context.actor == "dpo")
        #expect(erasure.context.reason == "ticket 7")
        #expect(erasure.memberships == 1)
        #expect(erasure.historyEntries == 2)
        #expect(!(try store.grant(Grant(subject: .user("gina"), productId: "prod_pro", idempotencyKey: "order-of-erin"))).isReplay)
    }

    @Test func undefineAndEraseSurviveARestartFromTheLog() throws {
        try withScratchDirectory { directory in
            let kept = try writeRemovals(in: directory, snapshotAfterwards: false)
            try expectRestored(from: directory, kept: kept)
        }
    }

    @Test func undefineAndEraseSurviveARestartFromASnapshotThatNamesNoErasedPerson() throws {
        try withScratchDirectory { directory in
            let kept = try writeRemovals(in: directory, snapshotAfterwards: true)
            for file in try FileManager.default.contentsOfDirectory(atPath: directory) {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
                for id in ["erin", "phone-of-erin", "order-of-erin"] {
                    #expect(bytes.range(of: Data(id.utf8)) == nil, "\(file) holds \(id)")
                }
            }
            try expectRestored(from: directory, kept: kept)
        }
    }

    @Test func aVersion2SegmentWithoutTheNewKindsIsStillRead() throws {
        // The worked example's record in a version 2 segment: the same bytes, version 2 in the header.
        var bytes = LogFormat.segmentHeader(firstSequence: 1)
        bytes[8] = 2
        let checksum = CRC32C.checksum(Array(bytes[0..<24]))
        bytes.replaceSubrange(24..<28, with: withUnsafeBytes(of: checksum.littleEndian, Array.init))
        let membership = Membership(
            id: MembershipID(rawValue: "mem_0k3n5q8r2t4v6"), productId: "pro", user: "u1", createdAt: Timestamp(millisecondsSinceEpoch: 1_704_067_200_000)
        )
        let logged = LoggedChange(sequence: 1, change: .create(membership, idempotencyKey: nil), context: ChangeContext(recordedAt: membership.createdAt))
        LogFormat.appendRecord(logged, to: &bytes)
        try withScratchDirectory { directory in
            let file = LogFormat.segmentName(firstSequence: 1)
            try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + file))
            #expect(try LogSegmentScan(path: directory + "/" + file, file: file).records == [logged])
        }
    }

    @Test func aVersion2SnapshotStillLoadsItsCatalogRevisionsAsDefines() throws {
        try withScratchDirectory { directory in
            var body = BinaryWriter()
            body.write(UInt32(1))  // one entitlement
            body.write("pro")
            body.write(UInt32(1))
            body.write("prod_pro")
            body.write(UInt64(0))  // no memberships
            body.write(UInt64(0))  // no idempotency keys
            body.write(UInt64(0))  // no revisions
            body.write(UInt64(1))  // one catalog revision, version 2 layout: no action byte
            body.write(UInt64(1))
            body.write(ChangeContext(actor: "ops", reason: "launch", recordedAt: Timestamp(millisecondsSinceEpoch: 1_704_067_200_000)))
            body.write("pro")
            body.write(UInt32(1))
            body.write("prod_pro")
            // The body ends here: no erasures section before version 3.
            try OldSnapshotFile.write(version: 2, body: body.bytes, sequence: 1, into: directory)

            let durable = try DurableStore(directory: directory, policy: .always)
            defer { durable.close() }
            let trail = durable.store.historyPage(ofEntitlement: "pro", limit: 10).entries
            #expect(trail.map(\.actionName) == ["define"])
            #expect(trail.first?.context.reason == "launch")
            #expect(durable.store.erasures(limit: 10).isEmpty)
            // Undefined now, and the snapshot it writes (in the current version) is read back the same.
            _ = try durable.store.undefine(entitlement: "pro")
            _ = try durable.snapshot()
            #expect(try SnapshotFile.read(SnapshotFormat.fileName(sequence: 2), in: directory).catalogRevisions.map(\.isRemoval) == [false, true])
        }
    }

    @Test func aVersion2SegmentHoldingAnEraseKindIsCorrupt() {
        var writer = BinaryWriter(capacity: 64)
        writer.write(LoggedChange(sequence: 1, change: .erase(user: "u", device: nil), context: ChangeContext(recordedAt: Timestamp(millisecondsSinceEpoch: 0))))
        writer.bytes.withUnsafeBytes { bytes in
            var version2 = BinaryReader(bytes)
            #expect(throws: BinaryReader.Malformed.self) { _ = try version2.readLoggedChange(version: 2) }
            var version3 = BinaryReader(bytes)
            #expect((try? version3.readLoggedChange(version: 3))?.change == .erase(user: "u", device: nil))
        }
    }
}
