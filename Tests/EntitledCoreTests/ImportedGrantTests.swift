import Testing

@testable import EntitledCore

/// Grants of purchases imported after the fact (`Grant.purchasedAt`, `PurchaseTerms.renewsCount`): the
/// membership begins at the store's sale, as every read of the past sees it.
@Suite struct ImportedGrantTests {
    let clock = TestClock(referenceTime)
    /// Two years before the tests' "now": when the imported subscriber bought.
    let purchase = referenceTime.adding(.days(-730))

    private func importGrant(
        into store: EntitlementStore, user: String = "alice", purchasedAt: Timestamp, expiry: Grant.Expiry = .lifetime,
        renewsCount: Int = 0, transaction: String? = nil, key: String? = nil, author: ChangeAuthor = .local
    ) throws -> Recorded<Membership> {
        var grant = Grant(
            subject: .user(user), productId: "prod_pro", source: .appStore, expiry: expiry,
            terms: PurchaseTerms(willRenew: true, renewsCount: renewsCount),
            transaction: transaction.map { Grant.Transaction(id: $0) }, idempotencyKey: key
        )
        grant.purchasedAt = purchasedAt
        return try store.grant(grant, by: author)
    }

    @Test func purchasedAtIsTheMembershipsCreationAndTheTimeOfItsTransaction() throws {
        let store = makeStore(clock: clock)
        let membership = try importGrant(into: store, purchasedAt: purchase, transaction: "t1").value
        #expect(membership.createdAt == purchase)
        #expect(membership.lifecycle.transactions.map(\.time) == [purchase])
        #expect(try store.membershipsPage(visibleTo: .user("alice"), limit: 10).memberships.map(\.createdAt) == [purchase])
    }

    @Test func aDurationCountsFromThePurchase() throws {
        let store = makeStore(clock: clock)
        let membership = try importGrant(into: store, purchasedAt: purchase, expiry: .after(.months(1))).value
        #expect(membership.expiresAt == purchase.adding(.months(1)))
        #expect(membership.lifecycle.transactions.isEmpty)
        // Long over: the import does not give access now.
        #expect(try !store.hasAccess(.user("alice")))
    }

    @Test func checksOfThePastSeeTheMembershipFromThePurchaseOnAndNothingBefore() throws {
        let store = makeStore(clock: clock)
        _ = try importGrant(into: store, purchasedAt: purchase, expiry: .after(.years(3)))
        #expect(try !store.hasAccess(.user("alice"), at: purchase.adding(milliseconds: -1)))
        #expect(try store.hasAccess(.user("alice"), at: purchase))
        #expect(try store.hasAccess(.user("alice"), at: purchase.adding(.days(365))))
        #expect(try store.hasAccess(.user("alice")))
        let before = try store.membershipsPage(visibleTo: .user("alice"), asOf: purchase.adding(milliseconds: -1), limit: 10)
        #expect(before.memberships.isEmpty)
        let between = try store.membershipsPage(visibleTo: .user("alice"), asOf: purchase.adding(.days(1)), limit: 10)
        #expect(between.memberships.map(\.createdAt) == [purchase])
    }

    @Test func theAuditTrailDatesTheGrantAtThePurchaseWithOrWithoutAnActor() throws {
        let store = makeStore(clock: clock)
        _ = store.buy("prod_earlier", as: .user("alice"))
        clock.advance(by: .minutes(1))
        _ = try importGrant(into: store, purchasedAt: purchase)
        _ = try importGrant(into: store, user: "bob", purchasedAt: purchase, author: ChangeAuthor(actor: "importer", reason: "import"))
        // Newest first by time: the import, dated two years back, comes after today's grant.
        let alice = try store.historyPage(of: .user("alice"), limit: 10).entries
        #expect(alice.map(\.context.recordedAt) == [referenceTime, purchase])
        let bob = try #require(try store.historyPage(of: .user("bob"), limit: 10).entries.first)
        #expect(bob.context.recordedAt == purchase)
        #expect(bob.context.actor == "importer")
        #expect(bob.sequence == 3)
        // Paged one entry at a time, the dates order the pages as they order the whole trail.
        let first = try store.historyPage(of: .user("alice"), limit: 1)
        let second = try store.historyPage(of: .user("alice"), after: first.next, limit: 1)
        #expect(second.entries.map(\.context.recordedAt) == [purchase])
        #expect(second.next == nil)
    }

    @Test func aPurchaseMoreThanAnHourAheadIsRefusedAndOneWithinTheHourIsDatedNow() throws {
        let store = makeStore(clock: clock)
        let tooLate = referenceTime.adding(.hours(1)).adding(milliseconds: 1)
        #expect(throws: StoreError.purchaseFromTheFuture(purchasedAt: tooLate, now: referenceTime)) {
            try importGrant(into: store, purchasedAt: tooLate)
        }
        #expect(StoreError.purchaseFromTheFuture(purchasedAt: tooLate, now: referenceTime).code == .invalid)
        #expect(store.sequence == 0)
        // A clock a few minutes ahead of this one: no membership begins after the change that made it.
        let ahead = try importGrant(into: store, purchasedAt: referenceTime.adding(.minutes(5)), expiry: .after(.days(30))).value
        #expect(ahead.createdAt == referenceTime)
        #expect(ahead.expiresAt == referenceTime.adding(.days(30)))
    }

    @Test func aRepeatedGrantIgnoresPurchasedAtAndRenewsCountAsItIgnoresTheOtherTerms() throws {
        let store = makeStore(clock: clock)
        let first = try importGrant(into: store, purchasedAt: purchase, renewsCount: 23, transaction: "t1", key: "k1").value
        // By its idempotency key, and as the same purchase reported again: even a refusable date is not looked at.
        let tooLate = referenceTime.adding(.days(2))
        let byKey = try importGrant(into: store, purchasedAt: tooLate, renewsCount: 1, key: "k1")
        let byTransaction = try importGrant(into: store, purchasedAt: referenceTime, renewsCount: 5, transaction: "t1")
        for replay in [byKey, byTransaction] {
            #expect(replay.isReplay)
            #expect(replay.value.createdAt == first.createdAt)
            #expect(replay.value.lifecycle.renewsCount == 23)
        }
        #expect(store.sequence == 1)
    }

    @Test func renewsCountIsTheImportsAndLaterRenewalsAddToIt() throws {
        let store = makeStore(clock: clock)
        let imported = try importGrant(into: store, purchasedAt: purchase, expiry: .at(referenceTime.adding(.days(3))), renewsCount: 23).value
        #expect(imported.lifecycle.renewsCount == 23)
        let renewal = LifecycleEvent(id: "evt_1", time: referenceTime, kind: .renewal(expiresAt: referenceTime.adding(.days(33))))
        #expect(try store.apply(renewal, to: imported.id).value.membership.lifecycle.renewsCount == 24)
        // A grant of a purchase made now starts at none, and keeps the standard lifecycle when nothing else is set.
        #expect(!store.buy("prod_other", as: .user("bob")).hasLifecycle)
    }

    @Test func anImportThatEndedBeforeItWasRecordedIsNotToldAsAnEndingLater() throws {
        let store = makeStore(clock: clock)
        _ = try importGrant(into: store, purchasedAt: purchase, expiry: .after(.months(1)))
        let running = try importGrant(into: store, user: "bob", purchasedAt: purchase, expiry: .after(.days(731))).value
        clock.advance(by: .days(2))
        let ends = store.takeAccessEnds(through: clock.now, limit: 100, collecting: true)
        #expect(ends.memberships.map(\.id) == [running.id])
    }

    @Test func aStoreRestoredFromAnImageSeesNothingBeforeAMembershipCreatedBeforeAnImport() throws {
        let store = makeStore(clock: clock)
        clock.set(referenceTime.adding(.days(-1)))
        _ = store.buy("prod_day_old", as: .user("carol"))
        clock.set(referenceTime)
        // Imported last, dated before the grant above: the last slot's `createdAt` is not the newest.
        _ = try importGrant(into: store, purchasedAt: purchase)
        let restored = EntitlementStore(restoring: store.image(), clock: { referenceTime })
        let twoDaysAgo = referenceTime.adding(.days(-2))
        for reader in [store, restored] {
            #expect(try !reader.hasAccess(.user("carol"), at: twoDaysAgo))
            #expect(try reader.membershipsPage(visibleTo: .user("carol"), asOf: twoDaysAgo, limit: 10).memberships.isEmpty)
            #expect(try reader.hasAccess(.user("alice"), at: twoDaysAgo))
        }
    }
}
