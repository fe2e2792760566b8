import Testing

@testable import EntitledCore

/// Listings a page at a time (`memberships`, `history`), and the bound on reads that go through every
/// membership of a subject.
@Suite struct PagingTests {
    let clock = TestClock(referenceTime)

    /// Follows `next` from the first page to the last, `limit` at a time, running `between` after each page.
    private func everyPage(
        of subject: Subject, in store: EntitlementStore, limit: Int, between: (Int) throws -> Void = { _ in }
    ) throws -> [[MembershipID]] {
        var pages: [[MembershipID]] = []
        var cursor: MembershipID?
        repeat {
            let page = try store.membershipsPage(visibleTo: subject, after: cursor, limit: limit)
            pages.append(page.memberships.map(\.id))
            cursor = page.next
            try between(pages.count)
        } while cursor != nil
        return pages
    }

    @Test func membershipPagesListEveryMembershipOnceNewestFirstAndTheLastHasNoNext() throws {
        let store = makeStore(clock: clock)
        let bought = (0..<5).map { store.buy("prod_\($0)", as: .user("alice")) }
        let pages = try everyPage(of: .user("alice"), in: store, limit: 2)
        #expect(pages == [[bought[4].id, bought[3].id], [bought[2].id, bought[1].id], [bought[0].id]])
        // A page that ends exactly at the last membership says so: no empty page after it.
        #expect(try everyPage(of: .user("alice"), in: store, limit: 5) == [bought.reversed().map(\.id)])
        #expect(try store.membershipsPage(visibleTo: .user("nobody"), limit: 10).memberships.isEmpty)
    }

    @Test func membershipsBoughtWhilePagingNeitherRepeatNorHideTheOthers() throws {
        let store = makeStore(clock: clock)
        let bought = (0..<6).map { store.buy("prod_\($0)", as: .user("alice")) }
        var later: [Membership] = []
        let pages = try everyPage(of: .user("alice"), in: store, limit: 2) { _ in later.append(store.buy("prod_new", as: .user("alice"))) }
        // The ones bought meanwhile are newer than the first page: a listing that starts again sees them.
        #expect(pages.flatMap { $0 } == bought.reversed().map(\.id))
        let again = try everyPage(of: .user("alice"), in: store, limit: 4).flatMap { $0 }
        #expect(again == (bought + later).reversed().map(\.id))
    }

    @Test func aPageAfterAnErasedMembershipIsRefusedNamingTheCursor() throws {
        let store = makeStore(clock: clock)
        (0..<3).forEach { store.buy("prod_\($0)", as: .user("alice")) }
        let first = try store.membershipsPage(visibleTo: .user("alice"), limit: 1)
        let cursor = try #require(first.next)
        _ = try store.erase(.user("alice"))
        #expect(throws: StoreError.unknownPageCursor(cursor.rawValue)) {
            try store.membershipsPage(visibleTo: .user("alice"), after: cursor, limit: 1)
        }
        #expect(StoreError.unknownPageCursor(cursor.rawValue).code == .invalid)
    }

    @Test func aHistoryPageAfterAnErasedMembershipIsRefusedNamingTheMembership() throws {
        // PROTOCOL.md, Pages: `history` refuses such an `after` as `memberships` does.
        let store = makeStore(clock: clock)
        (0..<3).forEach { store.buy("prod_\($0)", as: .user("alice")) }
        let first = try store.historyPage(of: .user("alice"), limit: 1)
        let cursor = try #require(first.next)
        let named = try #require(cursor.membership)
        _ = try store.erase(.user("alice"))
        #expect(throws: StoreError.unknownPageCursor(named.rawValue)) {
            try store.historyPage(of: .user("alice"), after: cursor, limit: 1)
        }
    }

    @Test func aTransactionsMembershipsAndAnEarlierMomentArePagedAlike() throws {
        let store = makeStore(clock: clock)
        let held = try store.grant(Grant(subject: .user("u1"), productId: "prod", transaction: Grant.Transaction(id: "t1", originalTransactionId: "t0"))).value
        for page in [try store.membershipsPage(withTransactionID: "t1", limit: 1), try store.membershipsPage(withOriginalTransactionID: "t0", limit: 1)] {
            #expect(page.memberships.map(\.id) == [held.id])
            #expect(page.next == nil)
        }
        #expect(try store.membershipsPage(withTransactionID: "t1", after: held.id, limit: 1).memberships.isEmpty)

        (0..<3).forEach { store.buy("prod_\($0)", as: .user("bob")) }
        let atEarlier = try store.membershipsPage(visibleTo: .user("bob"), asOf: clock.now.adding(.seconds(-1)), limit: 2)
        #expect(atEarlier.memberships.isEmpty && atEarlier.next == nil)  // bought after that moment
        clock.advance(by: .minutes(1))
        let pastFirst = try store.membershipsPage(visibleTo: .user("bob"), asOf: clock.now.adding(.seconds(-1)), limit: 2)
        let pastSecond = try store.membershipsPage(visibleTo: .user("bob"), asOf: clock.now.adding(.seconds(-1)), after: pastFirst.next, limit: 2)
        #expect(pastFirst.memberships.count == 2 && pastSecond.memberships.count == 1 && pastSecond.next == nil)
    }

    @Test func historyPagesFollowTheWholeTrailInTheOrderOfOneBigPage() throws {
        let store = makeStore(clock: clock)
        // Several entries in one millisecond and one change (a claim moves three memberships) must still
        // page without a repeat or a gap.
        let guests = (0..<3).map { store.buy("prod_\($0)", as: .device("phone"), expiry: .after(.days(30))) }
        _ = try store.claim(device: "phone", user: "alice")
        for guest in guests {
            clock.advance(by: .seconds(1))
            _ = try store.revoke(guest.id, reason: "refund")
        }
        let whole = try store.historyPage(of: .user("alice"), limit: 1000)
        #expect(whole.entries.count == 9)
        #expect(whole.next == nil)
        for limit in 1...4 {
            var paged: [AuditEntry] = []
            var cursor: HistoryCursor?
            repeat {
                let page = try store.historyPage(of: .user("alice"), after: cursor, limit: limit)
                #expect(page.entries.count <= limit)
                paged += page.entries
                // The cursor survives the wire: what a client passes back is its text.
                cursor = try page.next.map { try #require(HistoryCursor(text: $0.text)) }
            } while cursor != nil
            #expect(paged == whole.entries, "limit \(limit)")
        }
    }

    @Test func theCatalogsAndTheErasuresTrailsArePaged() throws {
        let store = makeStore(clock: clock)
        for products in [["a"], ["a", "b"], ["c"]] { _ = try store.define(entitlement: "pro", products: products) }
        _ = try store.define(entitlement: "other", products: ["x"])
        let first = store.historyPage(ofEntitlement: "pro", limit: 2)
        #expect(first.entries.map(\.change) == [.catalog(entitlement: "pro", products: ["c"]), .catalog(entitlement: "pro", products: ["a", "b"])])
        let second = store.historyPage(ofEntitlement: "pro", after: first.next, limit: 2)
        #expect(second.entries.map(\.change) == [.catalog(entitlement: "pro", products: ["a"])])
        #expect(second.next == nil)

        for user in ["u1", "u2", "u3"] {
            store.buy("prod", as: .user(user))
            _ = try store.erase(.user(user))
        }
        let newest = store.erasureHistoryPage(limit: 2)
        let oldest = store.erasureHistoryPage(after: newest.next, limit: 2)
        #expect(newest.entries.count == 2 && oldest.entries.count == 1 && oldest.next == nil)
        #expect(newest.entries.map(\.sequence) + oldest.entries.map(\.sequence) == store.erasures(limit: 10).map(\.sequence))
    }

    @Test func aCursorIsReadBackOnlyInTheFormTheServerWrites() {
        let cursor = HistoryCursor(recordedAt: 1_780_315_200_000, sequence: 57, membership: MembershipID(bits: 42), index: 3)
        #expect(HistoryCursor(text: cursor.text) == cursor)
        #expect(HistoryCursor(text: "1780315200000.0.-.0")?.membership == nil)
        for bad in ["", "1.2.3", "1.2.-.3.4", "-1.0.-.0", "1.-2.-.0", "1.0.mem_x.0", "1.0.-.-1", "a.b.c.d", "1.0.-.99999999999", "1.0..0"] {
            #expect(HistoryCursor(text: bad) == nil, "\(bad)")
        }
    }

    @Test func readsThatGoThroughEveryMembershipOfAHugeSubjectAreRefusedAndListingAndCheckingGoOn() throws {
        let store = makeStore(clock: clock)
        let limit = Limits.maximumMembershipsPerSubjectRead
        for index in 0...limit { store.buy("prod_\(index % 7)", as: .user("whale"), expiry: .after(.days(30))) }
        clock.advance(by: .minutes(1))
        // A check at a moment before the newest change reads the past; a later one is the present.
        store.buy("prod_0", as: .user("minnow"))
        let earlier = clock.now.adding(.seconds(-30))
        let refusals: [(String, () throws -> Void)] = [
            ("customer", { _ = try store.customerInfo(of: .user("whale")) }),
            ("history", { _ = try store.historyPage(of: .user("whale"), limit: 10) }),
            ("memberships at an earlier moment", { _ = try store.membershipsPage(visibleTo: .user("whale"), asOf: earlier, limit: 10) }),
            ("check at an earlier moment", { _ = try store.access(.user("whale"), at: earlier) }),
        ]
        for (operation, read) in refusals {
            #expect(throws: StoreError.subjectTooLarge(.user("whale"), operation: operation, size: .memberships(limit + 1)), "\(operation)") { try read() }
        }
        #expect(StoreError.subjectTooLarge(.user("whale"), operation: "customer", size: .memberships(limit + 1)).code == .overLimit)
        #expect(StoreError.subjectTooLarge(.user("whale"), operation: "customer", size: .moreMembershipsThan(limit)).message.contains("more than 10000 memberships"))
        // What stays open to a huge subject: checking now, and listing page by page.
        #expect(try store.hasAccess(.user("whale")))
        #expect(try store.membershipsPage(visibleTo: .user("whale"), limit: 1000).memberships.count == 1000)
        // And nobody else is affected.
        #expect(try store.customerInfo(of: .user("minnow")).allPurchasedProductIds == ["prod_0"])
        #expect(try store.historyPage(of: .user("minnow"), limit: 10).entries.count == 1)
    }

    @Test func aTrailWithMoreChangesThanAReadGoesThroughIsRefusedNamingThem() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod", as: .user("renewer"), expiry: .after(.days(1)))
        let changes = Limits.maximumChangesPerSubjectRead + 1
        for index in 0..<changes {
            let renewal = LifecycleEvent(id: "e\(index)", time: clock.now, kind: .renewal(expiresAt: referenceTime.adding(.days(2)).adding(milliseconds: Int64(index))))
            _ = try store.apply(renewal, to: membership.id)
        }
        clock.advance(by: .minutes(1))
        store.buy("prod", as: .user("other"))
        let refusal = StoreError.subjectTooLarge(.user("renewer"), operation: "history", size: .changes(changes, memberships: 1))
        #expect(throws: refusal) { try store.historyPage(of: .user("renewer"), limit: 10) }
        #expect(refusal.message.hasPrefix("user \"renewer\" has \(changes) recorded changes to its 1 memberships, more than the \(changes - 1) that history goes through"))
        // The membership itself is listed and checked as ever.
        #expect(try store.hasAccess(.user("renewer")))
        #expect(try store.customerInfo(of: .user("renewer")).activeProducts == ["prod"])
    }
}
