import EntitledCore
import Foundation
import Testing

@testable import EntitledStorage

/// What format version 7 added, through real data directories: the change feed reaches as far back after a
/// restart (from a snapshot and from the log) as before it, and a snapshot keeps no entry of an erased
/// membership.
@Suite struct ChangeFeedDurabilityTests {
    /// Every item of the feed, as (sequence, action, membership id).
    func feed(of store: EntitlementStore) throws -> [(UInt64, String, String)] {
        try store.changes(after: store.feedOldestAfter, limit: 1000).items.map { item in
            var id = ""
            if case .membership(_, let membership) = item.entry.change { id = membership.id.rawValue }
            return (item.sequence, item.entry.actionName, id)
        }
    }

    @Test func theFeedSurvivesASnapshotAndTheLogAfterIt() throws {
        try withScratchDirectory { directory in
            let before: [(UInt64, String, String)]
            do {
                let durable = try DurableStore(directory: directory, policy: .always)
                defer { durable.close() }
                let store = durable.store
                let kept = try store.grant(Grant(subject: .user("frank"), productId: "pro")).value
                _ = try store.grant(Grant(subject: .device("phone-of-erin"), productId: "pro"))
                _ = try store.claim(device: "phone-of-erin", user: "erin")
                try store.define(entitlement: "premium", products: ["pro"])
                _ = try store.erase(.user("erin"), by: ChangeAuthor(actor: "dpo", reason: "ticket 7"))
                _ = try durable.snapshot()
                _ = try store.revoke(kept.id, reason: "refund")  // after the snapshot: in the log only
                before = try feed(of: store)
            }
            #expect(before.map(\.0) == [1, 4, 5, 6])
            #expect(before.map(\.1) == ["grant", "define", "erase", "revoke"])

            let reopened = try DurableStore(directory: directory, policy: .always)
            defer { reopened.close() }
            #expect(reopened.store.feedOldestAfter == 0)
            let after = try feed(of: reopened.store)
            #expect(after.map(\.0) == before.map(\.0) && after.map(\.1) == before.map(\.1) && after.map(\.2) == before.map(\.2))
            // The snapshot kept the entries of Frank's grant only: the erased memberships' are left out.
            #expect(reopened.store.feedEntryCount == 2)
            let erasure = try reopened.store.changes(after: 4, limit: 1).items[0]
            #expect(erasure.erasedMemberships.count == 1 && erasure.entry.actionName == "erase")
        }
    }

    @Test func aVersion6SnapshotLoadsWithAFeedThatStartsAfterIt() throws {
        try withScratchDirectory { directory in
            do {
                let durable = try DurableStore(directory: directory, policy: .always)
                defer { durable.close() }
                _ = try durable.store.grant(Grant(subject: .user("a"), productId: "pro"))
                _ = try durable.store.grant(Grant(subject: .user("b"), productId: "pro"))
                _ = try durable.snapshot()
            }
            // The same snapshot as version 6 wrote it: the body without the feed's section.
            let name = SnapshotFormat.fileName(sequence: 2)
            let path = directory + "/" + name
            let image = try SnapshotFile.read(name, in: directory)
            var withoutFeed = image
            withoutFeed.feed = ChangeFeed(horizon: 1)
            let encoded = SnapshotFile.encode(withoutFeed)
            let feedSection = try #require(Self.feedSectionLength(of: withoutFeed.feed))
            let body = Array(encoded[SnapshotFormat.headerLength..<(encoded.count - feedSection)])
            try FileManager.default.removeItem(atPath: path)
            try OldSnapshotFile.write(version: 6, body: body, sequence: 2, into: directory)

            let reopened = try DurableStore(directory: directory, policy: .always)
            defer { reopened.close() }
            #expect(reopened.store.membershipCount == 2)
            #expect(reopened.store.feedOldestAfter == 2)
            _ = try reopened.store.grant(Grant(subject: .user("c"), productId: "pro"))
            #expect(try feed(of: reopened.store).map(\.0) == [3])
        }
    }

    /// The bytes the feed's section of `feed` takes (an empty feed's: horizon, no ranges, no erasures, no chunks).
    static func feedSectionLength(of feed: ChangeFeed) -> Int? {
        guard feed.chunks.isEmpty, feed.erasures.isEmpty, feed.skipped.isEmpty else { return nil }
        return 8 + 4 + 8 + 8
    }
}
