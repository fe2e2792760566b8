import Testing

@testable import EntitledCore

/// The listing of one source's memberships a reconciliation with a store reads
/// (`EntitlementStore.membershipsPage(ofSource:...)`): creation order, a position as cursor, a bounded
/// number of slots per page.
@Suite struct SourceListingTests {
    let clock = TestClock(referenceTime)

    /// Every page of `source` from the start (or `cursor`), `limit` a page among `budget` slots, running
    /// `between` after each page; the pages' ids.
    private func everyPage(
        of source: PurchaseSource, in store: EntitlementStore, endedAfter: Timestamp? = nil, after cursor: SourceCursor? = nil,
        limit: Int = 1000, budget: Int = Limits.maximumSlotsPerSourcePage, between: () throws -> Void = {}
    ) throws -> [[MembershipID]] {
        var pages: [[MembershipID]] = []
        var cursor = cursor
        repeat {
            let page = try store.membershipsPage(ofSource: source, endedAfter: endedAfter, after: cursor, limit: limit, budget: budget)
            pages.append(page.memberships.map(\.id))
            cursor = page.next
            try between()
        } while cursor != nil
        return pages
    }

    @Test func aListingTakesTheSourcesMembershipsOnlyOldestFirst() throws {
        let store = makeStore(clock: clock)
        let apple = (0..<3).map { store.buy("prod_\($0)", as: .user("u\($0)"), source: .appStore) }
        store.buy("prod_web", as: .user("u9"), source: .stripe)
        let guest = store.buy("prod_guest", as: .device("phone"), source: .appStore)
        #expect(try everyPage(of: .appStore, in: store) == [(apple + [guest]).map(\.id)])
        #expect(try everyPage(of: .whop, in: store) == [[]])
    }

    @Test func endedAfterTakesWhatMayStillHaveHadAccessThenAndLeavesTheRest() throws {
        let store = makeStore(clock: clock)
        let moment = referenceTime.adding(.days(-10))
        clock.set(moment.adding(.days(-20)))
        func grant(_ name: String, expiry: Grant.Expiry) -> Membership { store.buy(name, as: .user(name), expiry: expiry, source: .playStore) }
        let lifetime = grant("lifetime", expiry: .lifetime)
        let expiresAtTheMoment = grant("at_moment", expiry: .at(moment))
        let expiresLater = grant("later", expiry: .at(moment.adding(.days(5))))
        let expiredBefore = grant("before", expiry: .at(moment.adding(milliseconds: -1)))
        let revokedLifetime = grant("revoked_lifetime", expiry: .lifetime)
        let graceAfter = grant("grace", expiry: .at(moment.adding(.days(-1))))
        let revokedLaterPeriod = grant("revoked_later_period", expiry: .at(moment.adding(.days(30))))
        clock.set(moment.adding(.days(-2)))
        _ = try store.revoke(revokedLifetime.id, reason: "refund")
        _ = try store.revoke(revokedLaterPeriod.id, reason: "refund")
        let issue = LifecycleEvent(id: "evt_1", time: moment.adding(.days(-3)), kind: .billingIssue(gracePeriodExpiresAt: moment.adding(.days(2))))
        _ = try store.apply(issue, to: graceAfter.id)
        clock.set(referenceTime)
        // Revoked after the moment: it had access then.
        let revokedAfter = grant("revoked_after", expiry: .at(moment.adding(.days(-5))))
        _ = try store.revoke(revokedAfter.id, reason: "chargeback")

        let listed = try everyPage(of: .playStore, in: store, endedAfter: moment).flatMap { $0 }
        #expect(listed == [lifetime, expiresAtTheMoment, expiresLater, graceAfter, revokedLaterPeriod, revokedAfter].map(\.id))
        #expect(!listed.contains(expiredBefore.id))
        #expect(!listed.contains(revokedLifetime.id))
        // Without the moment, every membership of the source.
        #expect(try everyPage(of: .playStore, in: store).flatMap { $0 }.count == 8)
    }

    @Test func pagesFollowTheCursorToTheEndAndOnlyTheLastHasNoNext() throws {
        let store = makeStore(clock: clock)
        let bought = (0..<5).map { store.buy("prod_\($0)", as: .user("u\($0)"), source: .stripe) }
        #expect(try everyPage(of: .stripe, in: store, limit: 2) == [[bought[0].id, bought[1].id], [bought[2].id, bought[3].id], [bought[4].id]])
        // A page that takes the last membership ends the listing: no empty page after it.
        let whole = try store.membershipsPage(ofSource: .stripe, limit: 5)
        #expect(whole.memberships.count == 5)
        #expect(whole.next == nil)
    }

    @Test func aPageLooksAtNoMoreSlotsThanItsBudgetAndMayComeBackEmptyWithANext() throws {
        let store = makeStore(clock: clock)
        (0..<10).forEach { store.buy("prod_\($0)", as: .user("u\($0)"), source: .manual) }
        let wanted = store.buy("prod_whop", as: .user("w"), source: .whop)
        let first = try store.membershipsPage(ofSource: .whop, limit: 100, budget: 4)
        #expect(first.memberships.isEmpty)
        #expect(first.next?.slot == 3)
        #expect(try everyPage(of: .whop, in: store, budget: 4) == [[], [], [wanted.id]])
        // The real budget: a page of a store larger than it ends where the budget does.
        let large = makeStore(clock: clock)
        for index in 0..<(Limits.maximumSlotsPerSourcePage + 1) { large.buy("p", as: .user("u\(index)"), source: .manual) }
        let page = try large.membershipsPage(ofSource: .appStore, limit: 1000)
        #expect(page.memberships.isEmpty)
        #expect(page.next?.slot == Limits.maximumSlotsPerSourcePage - 1)
    }

    @Test func aCursorAtTheLastSlotGivesAnEmptyLastPageAndOneBeyondItIsRefused() throws {
        let store = makeStore(clock: clock)
        (0..<3).forEach { store.buy("prod_\($0)", as: .user("u\($0)"), source: .appStore) }
        let first = try store.membershipsPage(ofSource: .appStore, limit: 2)
        var atTheEnd = try #require(first.next)
        atTheEnd.slot = 2
        let last = try store.membershipsPage(ofSource: .appStore, after: atTheEnd, limit: 2)
        #expect(last.memberships.isEmpty)
        #expect(last.next == nil)
        var beyond = atTheEnd
        beyond.slot = 3
        #expect(throws: StoreError.unknownSourceCursor(beyond.text)) { try store.membershipsPage(ofSource: .appStore, after: beyond, limit: 2) }
        #expect(StoreError.unknownSourceCursor(beyond.text).code == .invalid)
    }

    @Test func erasedMembershipsAreSkippedAndAPageOfErasedSlotsStillMovesOn() throws {
        let store = makeStore(clock: clock)
        let kept = store.buy("prod_kept", as: .user("bob"), source: .appStore)
        (0..<6).forEach { store.buy("prod_\($0)", as: .user("alice"), source: .appStore) }
        let last = store.buy("prod_last", as: .user("carol"), source: .appStore)
        _ = try store.erase(.user("alice"))
        #expect(try everyPage(of: .appStore, in: store, budget: 2) == [[kept.id], [], [], [last.id]])
        // An erased page's cursor keeps the anchor it started after: the last membership not erased.
        let second = try store.membershipsPage(ofSource: .appStore, after: store.membershipsPage(ofSource: .appStore, limit: 10, budget: 2).next, limit: 10, budget: 2)
        #expect(second.next?.anchor == kept.id)
    }

    @Test func membershipsGrantedDuringTheListingComeAtItsEnd() throws {
        let store = makeStore(clock: clock)
        let before = (0..<4).map { store.buy("prod_\($0)", as: .user("u\($0)"), source: .playStore) }
        var during: [Membership] = []
        let pages = try everyPage(of: .playStore, in: store, limit: 2) {
            if during.count < 2 { during.append(store.buy("prod_new", as: .user("n\(during.count)"), source: .playStore)) }
        }
        #expect(pages.flatMap { $0 } == (before + during).map(\.id))
    }

    @Test func aCursorFromAnotherNumberingGoesOnAfterItsAnchor() throws {
        let store = makeStore(clock: clock)
        let first = store.buy("prod_0", as: .user("bob"), source: .appStore)
        (0..<3).forEach { store.buy("prod_\($0)", as: .user("alice"), source: .appStore) }
        let rest = (1..<4).map { store.buy("prod_\($0)", as: .user("u\($0)"), source: .appStore) }
        _ = try store.erase(.user("alice"))
        // The page stops on an erased slot; a store loaded from a snapshot (which leaves erased slots out)
        // numbers its slots otherwise, and goes on after the anchor, the last membership not erased.
        let page = try store.membershipsPage(ofSource: .appStore, limit: 10, budget: 3)
        let cursor = try #require(page.next)
        #expect(page.memberships.map(\.id) == [first.id])
        #expect(cursor.anchor == first.id)
        let restored = EntitlementStore(restoring: store.image().withoutErasedMemberships(), clock: { referenceTime })
        #expect(try everyPage(of: .appStore, in: restored, after: cursor, limit: 10, budget: 3).flatMap { $0 } == rest.map(\.id))
        #expect(try everyPage(of: .appStore, in: store, after: cursor, limit: 10, budget: 3).flatMap { $0 } == rest.map(\.id))
        // An anchor the other store does not hold (erased since) cannot be found there: refused, not guessed.
        _ = try restored.erase(.user("bob"))
        let elsewhere = EntitlementStore(restoring: restored.image().withoutErasedMemberships(), clock: { referenceTime })
        #expect(throws: StoreError.unknownSourceCursor(cursor.text)) { try elsewhere.membershipsPage(ofSource: .appStore, after: cursor, limit: 10) }
    }

    @Test func aCursorIsWrittenAsTextAndReadBackAndAnythingElseIsNoCursor() throws {
        let cursor = SourceCursor(numbering: 0xdead_beef_0042, slot: 19_999, anchor: MembershipID(rawValue: "mem_1ymr6jcw5jqzv"))
        #expect(cursor.text == "deadbeef0042.19999.mem_1ymr6jcw5jqzv")
        #expect(SourceCursor(text: cursor.text) == cursor)
        #expect(SourceCursor(text: "1.0.-") == SourceCursor(numbering: 1, slot: 0, anchor: nil))
        for text in ["", "1.0", "1.0.-.4", "x.0.-", "1.-1.-", "1.01.-", "1.0.mem_nope", "DEAD.0.-", "1.4294967296.-", "11111111111111111.0.-"] {
            #expect(SourceCursor(text: text) == nil, "\(text)")
        }
    }
}
