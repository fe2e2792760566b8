import EntitledCore
import Testing

@testable import EntitledStorage

/// A snapshot's memberships decoded on several threads (`SnapshotFile.readMemberships`) are the ones one
/// thread reads, in order, whatever the thread count, and a store restored from them answers as the
/// original: plain, guest, revoked and renewing memberships, plans, ids that are not ASCII, and products
/// that the threads meet in different orders (their name numbers differ and are joined).
@Suite struct ParallelSnapshotDecodingTests {
    static let base: Int64 = 1_800_000_000_000

    /// `count` memberships of every kind. The first half names only `prod_a`; the second half names
    /// `prod_b` first, so a thread decoding it numbers the products the other way round.
    static func table(count: Int) -> MembershipTable {
        var table = MembershipTable()
        for index in 0..<count {
            let guest = index % 7 == 0
            var membership = Membership(
                id: MembershipID(bits: UInt64(index + 1) &* 0x9E37_79B9_7F4A_7C15),
                productId: index < count / 2 || index % 3 == 1 ? "prod_a" : "prod_b",
                planId: index % 5 == 0 ? "plan_\(index % 2)" : nil,
                device: guest || index % 4 == 0 ? "device-\(index % 1000)" : nil,
                user: guest ? nil : (index % 19 == 0 ? "ユーザー\(index)" : "user-\(index)"),
                createdAt: Timestamp(millisecondsSinceEpoch: base + Int64(index)),
                expiresAt: index % 11 == 0 ? nil : Timestamp(millisecondsSinceEpoch: base + Int64(index % 3 == 0 ? -1 : 1) * 86_400_000),
                source: PurchaseSource.allCases[index % PurchaseSource.allCases.count]
            )
            if index % 13 == 0 { membership.revocation = Revocation(revokedAt: Timestamp(millisecondsSinceEpoch: base), reason: "refund") }
            if index % 17 == 0 {
                membership.lifecycle = MembershipLifecycle(
                    willRenew: true,
                    transactions: [PurchaseTransaction(id: "t\(index)", originalTransactionId: "o\(index / 34)", type: "purchase", time: Timestamp(millisecondsSinceEpoch: base))]
                )
            }
            table.append(membership)
        }
        return table
    }

    static func encoded(_ table: MembershipTable) -> [UInt8] {
        var writer = BinaryWriter(capacity: 1 << 20)
        for membership in table { writer.write(membership) }
        return writer.bytes
    }

    static func decode(_ bytes: [UInt8], count: Int, threads: Int) -> Result<(table: MembershipTable, end: Int), BinaryReader.Malformed> {
        bytes.withUnsafeBytes { raw in
            var reader = BinaryReader(raw)
            do throws(BinaryReader.Malformed) {
                let table = try SnapshotFile.readMemberships(count: UInt64(count), version: SnapshotFormat.version, from: &reader, threads: threads)
                return .success((table, reader.offset))
            } catch {
                return .failure(error)
            }
        }
    }

    static let count = 5 * MembershipTable.chunkSize + 123
    static let original = table(count: count)
    static let bytes = encoded(original)

    @Test(arguments: [1, 2, 3, 8])
    func everyThreadCountDecodesTheMembershipsOneThreadReads(threads: Int) throws {
        #expect(Self.count >= SnapshotFile.smallestParallelDecoding)
        let (table, end) = try Self.decode(Self.bytes, count: Self.count, threads: threads).get()
        #expect(end == Self.bytes.count)
        #expect(table.count == Self.count)
        #expect(Array(table) == Array(Self.original))
    }

    @Test(arguments: [1, 2, 3])
    func aBodyCutShortIsRefusedAtTheSamePlaceWhateverTheThreads(threads: Int) {
        let cut = Array(Self.bytes.dropLast(10))
        guard case .failure(let error) = Self.decode(cut, count: Self.count, threads: threads) else {
            Issue.record("a body cut short was read")
            return
        }
        guard case .failure(let alone) = Self.decode(cut, count: Self.count, threads: 1) else { return }
        #expect(error.offset == alone.offset)
        #expect(error.problem == alone.problem)
    }

    @Test func aStoreRestoredFromTheDecodedTableAnswersAsTheOriginal() throws {
        let (decoded, _) = try Self.decode(Self.bytes, count: Self.count, threads: 2).get()
        let clock = { @Sendable in Timestamp(millisecondsSinceEpoch: Self.base) }
        let original = EntitlementStore(restoring: StoreImage(sequence: 1, memberships: Self.original, catalog: ["pro": ["prod_b"]]), clock: clock)
        let restored = EntitlementStore(restoring: StoreImage(sequence: 1, memberships: decoded, catalog: ["pro": ["prod_b"]]), clock: clock)
        #expect(restored.sizes == original.sizes)
        for index in stride(from: 0, to: Self.count, by: 5) {
            let user = index % 19 == 0 ? "ユーザー\(index)" : "user-\(index)"
            for subject in [Subject(user: user, device: nil), Subject(user: nil, device: "device-\(index % 1000)")].compactMap({ $0 }) {
                for filter in [AccessFilter.anyProduct, .product("prod_a"), .entitlement("pro")] {
                    let query = AccessQuery(subject: subject, filter: filter)
                    #expect(try restored.check(query) == original.check(query))
                }
                #expect(restored.memberships(visibleTo: subject) == original.memberships(visibleTo: subject))
            }
        }
        #expect(restored.memberships(withOriginalTransactionID: "o3") == original.memberships(withOriginalTransactionID: "o3"))
        #expect(!restored.memberships(withOriginalTransactionID: "o3").isEmpty)
    }
}
