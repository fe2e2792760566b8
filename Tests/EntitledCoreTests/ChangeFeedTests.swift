import Testing

@testable import EntitledCore

/// The change feed (`EntitlementStore.changes(after:limit:newest:)`): every change in order, a page at a
/// time, as far back as its retention reaches, without what an erasure removed.
@Suite struct ChangeFeedTests {
    let clock = TestClock(referenceTime)

    /// The (sequence, action) of every item after `after`, read page by page with `limit`.
    private func everyItem(of store: EntitlementStore, after: UInt64 = 0, limit: Int = 100) throws -> [(UInt64, String)] {
        var items: [(UInt64, String)] = []
        var position = after
        while true {
            let page = try store.changes(after: position, limit: limit)
            items += page.items.map { ($0.sequence, $0.entry.actionName) }
            #expect(page.next >= position)
            if !page.hasMore { return items }
            position = page.next
        }
    }

    @Test func everyKindOfChangeIsInTheFeedInOrderWithWhatItLeftBehind() throws {
        let store = makeStore(clock: clock)
        let alice = try store.grant(Grant(subject: .user("alice"), productId: "pro", expiry: .after(.days(30))), by: ChangeAuthor(actor: "ops", reason: "welcome")).value
        store.buy("basic", as: .device("phone"))
        _ = try store.claim(device: "phone", user: "bob")
        try store.define(entitlement: "premium", products: ["pro"])
        clock.advance(by: .minutes(1))
        _ = try store.extend(alice.id, .by(.days(7)))
        _ = try store.revoke(alice.id, reason: "refund", actor: "support")

        let page = try store.changes(after: 0, limit: 100)
        #expect(page.items.map(\.sequence) == [1, 2, 3, 4, 5, 6])
        #expect(page.items.map(\.entry.actionName) == ["grant", "grant", "claim", "define", "extend", "revoke"])
        #expect(page.next == 6 && page.newest == 6 && page.oldestAfter == 0 && !page.hasMore)
        // Each membership item shows the membership as its change left it, not as it is now.
        guard case .membership(_, let granted) = page.items[0].entry.change, case .membership(_, let claimed) = page.items[2].entry.change,
            case .membership(_, let extended) = page.items[4].entry.change, case .membership(_, let revoked) = page.items[5].entry.change
        else {
            Issue.record("membership items expected: \(page.items)")
            return
        }
        #expect(granted.revocation == nil && granted.expiresAt == referenceTime.adding(.days(30)))
        #expect(page.items[0].entry.context.actor == "ops" && page.items[0].entry.context.reason == "welcome")
        #expect(claimed.user == "bob" && claimed.device == "phone")
        #expect(extended.expiresAt == referenceTime.adding(.days(37)) && extended.revocation == nil)
        #expect(revoked.revocation?.reason == "refund" && page.items[5].entry.context.actor == "support")
        #expect(page.items[3].entry.change == .catalog(entitlement: "premium", products: ["pro"]))
    }

    @Test func aPageHoldsWholeChangesAndTheNextPageGoesOnAfterTheLastOne() throws {
        let store = makeStore(clock: clock)
        for index in 0..<3 { store.buy("p\(index)", as: .device("tablet")) }
        _ = try store.claim(device: "tablet", user: "carol")  // change 4: three items
        store.buy("p9", as: .user("dave"))

        let first = try store.changes(after: 0, limit: 4)
        // The limit falls inside the claim: the page takes the claim whole rather than split it.
        #expect(first.items.map(\.sequence) == [1, 2, 3, 4, 4, 4])
        #expect(first.next == 4 && first.hasMore)
        let second = try store.changes(after: first.next, limit: 4)
        #expect(second.items.map(\.sequence) == [5])
        #expect(second.next == 5 && !second.hasMore)
        #expect(try everyItem(of: store, limit: 1).map(\.0) == [1, 2, 3, 4, 4, 4, 5])
    }

    @Test func aPageShowsNothingAfterTheNewestChangeItMayShow() throws {
        let store = makeStore(clock: clock)
        for index in 0..<5 { store.buy("p\(index)", as: .user("u\(index)")) }
        let page = try store.changes(after: 1, limit: 100, newest: 3)
        #expect(page.items.map(\.sequence) == [2, 3])
        #expect(page.next == 3 && page.newest == 3)
        let none = try store.changes(after: 5, limit: 100)
        #expect(none.items.isEmpty && none.next == 5 && none.newest == 5)
    }

    @Test func anErasedPersonsChangesLeaveTheFeedAndTheErasureNamesOnlyMembershipIDs() throws {
        let store = makeStore(clock: clock)
        let guest = store.buy("basic", as: .device("phone"))
        _ = try store.claim(device: "phone", user: "alice")
        let own = store.buy("pro", as: .user("alice"))
        let bobsOnPhone = store.buy("pro", as: Subject(user: "bob", device: "phone")!)
        store.buy("pro", as: .user("erin"))
        _ = try store.erase(Subject(user: "alice", device: "phone")!, by: ChangeAuthor(actor: "dpo", reason: "ticket 7"))

        let items = try store.changes(after: 0, limit: 100).items
        #expect(items.map(\.entry.actionName) == ["grant", "grant", "erase"])
        #expect(items.map(\.sequence) == [4, 5, 6])
        let erasure = items[2]
        #expect(Set(erasure.erasedMemberships) == [guest.id, own.id])
        #expect(erasure.detachedMemberships == [bobsOnPhone.id])
        // Bob's membership stays, without the erased device, in its earlier item too.
        guard case .membership(_, let bobs) = items[0].entry.change else { Issue.record("\(items)"); return }
        #expect(bobs.id == bobsOnPhone.id && bobs.user == "bob" && bobs.device == nil)
        #expect(!String(describing: items).contains("alice"))
    }

    @Test func retentionByCountLetsGoOfTheOldestChunksAndAnEarlierReadIsRefused() throws {
        let store = makeStore(clock: clock)
        store.feedRetention = FeedRetention(ageMilliseconds: nil, changes: ChangeFeed.chunkSize)
        let total = ChangeFeed.chunkSize * 3 + 10
        for index in 0..<total { store.buy("p", as: .user("u\(index)")) }
        // The newest chunk and the full one before it stay: at least the retention's count.
        #expect(store.feedEntryCount >= ChangeFeed.chunkSize && store.feedEntryCount < ChangeFeed.chunkSize * 2 + 10)
        let oldestAfter = store.feedOldestAfter
        #expect(oldestAfter == UInt64(total - store.feedEntryCount))
        #expect(throws: StoreError.feedTruncated(after: 0, oldestAfter: oldestAfter, retention: store.feedRetention)) {
            try store.changes(after: 0, limit: 10)
        }
        #expect(StoreError.feedTruncated(after: 0, oldestAfter: oldestAfter, retention: store.feedRetention).code == .truncated)
        let page = try store.changes(after: oldestAfter, limit: 10)
        #expect(page.items.first?.sequence == oldestAfter + 1)
        #expect(try everyItem(of: store, after: oldestAfter, limit: 1000).count == store.feedEntryCount)
    }

    @Test func retentionByAgeLetsGoOfChangesOlderThanItOnceANewChunkStarts() throws {
        let store = makeStore(clock: clock)
        store.feedRetention = FeedRetention(ageMilliseconds: 86_400_000, changes: 1_000_000)
        for index in 0..<ChangeFeed.chunkSize { store.buy("p", as: .user("old\(index)")) }
        clock.advance(by: .days(2))
        store.buy("p", as: .user("new"))  // starts a chunk: the first, two days old, goes
        #expect(store.feedOldestAfter == UInt64(ChangeFeed.chunkSize))
        #expect(try store.changes(after: store.feedOldestAfter, limit: 10).items.count == 1)
    }

    @Test func numbersTheNumberingPassedOverAreRefusedAsLostChanges() throws {
        let store = makeStore(clock: clock)
        store.buy("p", as: .user("a"))
        try store.skipNumbers(through: 1_000)
        store.buy("p", as: .user("b"))
        #expect(throws: StoreError.feedLostChanges(after: 500, skipped: 2...1_000)) { try store.changes(after: 500, limit: 10) }
        #expect(try store.changes(after: 1, limit: 10).items.map(\.sequence) == [1_001])
        #expect(try store.changes(after: 1_000, limit: 10).items.map(\.sequence) == [1_001])
    }

    @Test func aStoreRestoredFromAnImageKeepsTheFeedAndOneWithoutAFeedStartsAfterTheImage() throws {
        let store = makeStore(clock: clock)
        store.buy("p", as: .user("a"))
        _ = try store.claim(device: "none", user: "a")
        store.buy("p", as: .user("b"))
        let restored = EntitlementStore(restoring: store.image(), clock: { referenceTime })
        #expect(try everyItem(of: restored).map(\.0) == [1, 2])

        var image = store.image()
        image.feed = ChangeFeed(horizon: image.sequence + 1)
        let withoutFeed = EntitlementStore(restoring: image, clock: { referenceTime })
        #expect(withoutFeed.feedOldestAfter == 2)
        #expect(throws: StoreError.self) { try withoutFeed.changes(after: 0, limit: 10) }
        withoutFeed.buy("p", as: .user("c"))
        #expect(try everyItem(of: withoutFeed, after: 2).map(\.0) == [3])
    }
}
