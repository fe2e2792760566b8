import Testing

@testable import EntitledCore

/// Memberships are found by the store transactions they hold, through every change that adds or removes
/// one, and after a restore from an image (a snapshot).
@Suite struct TransactionLookupTests {
    let clock = TestClock(referenceTime)

    func subscribe(_ store: EntitlementStore, _ user: String, transaction: String, original: String? = nil) throws -> Membership {
        try store.grant(
            Grant(
                subject: .user(user), productId: "prod_monthly", expiry: .after(.days(30)),
                transaction: Grant.Transaction(id: transaction, originalTransactionId: original)
            )
        ).value
    }

    func renewal(_ id: String, transaction: String) -> LifecycleEvent {
        LifecycleEvent(
            id: id, time: referenceTime, kind: .renewal(expiresAt: referenceTime.adding(.days(60))),
            transactionId: transaction
        )
    }

    @Test func aGrantsTransactionFindsItsMembershipAndItsOriginalToo() throws {
        let store = makeStore(clock: clock)
        let membership = try subscribe(store, "alice", transaction: "1000")
        store.buy("prod_other", as: .user("alice"))
        #expect(store.memberships(withTransactionID: "1000").map(\.id) == [membership.id])
        #expect(store.memberships(withOriginalTransactionID: "1000").map(\.id) == [membership.id])
        #expect(store.memberships(withTransactionID: "999").isEmpty)
    }

    @Test func aGrantNamingAnOriginalTransactionIsFoundByBoth() throws {
        let store = makeStore(clock: clock)
        let membership = try subscribe(store, "alice", transaction: "1002", original: "1000")
        #expect(store.memberships(withTransactionID: "1002").map(\.id) == [membership.id])
        #expect(store.memberships(withOriginalTransactionID: "1000").map(\.id) == [membership.id])
        // 1000 is only the subscription's original, not a transaction this store has seen.
        #expect(store.memberships(withTransactionID: "1000").isEmpty)
        #expect(store.memberships(withOriginalTransactionID: "1002").isEmpty)
    }

    @Test func aRenewalsTransactionFindsTheMembershipAndBelongsToTheOriginal() throws {
        let store = makeStore(clock: clock)
        let membership = try subscribe(store, "alice", transaction: "1000")
        _ = try store.apply(renewal("evt_1", transaction: "1001"), to: membership.id)
        #expect(store.memberships(withTransactionID: "1001").map(\.id) == [membership.id])
        #expect(store.memberships(withTransactionID: "1000").map(\.id) == [membership.id])
        #expect(store.memberships(withOriginalTransactionID: "1000").map(\.id) == [membership.id])
        // The renewal as found: with both transactions.
        #expect(store.memberships(withTransactionID: "1001").first?.lifecycle.transactions.map(\.id) == ["1000", "1001"])
        // A repeated event adds nothing (the index holds one membership, once).
        _ = try store.apply(renewal("evt_1", transaction: "1001"), to: membership.id)
        #expect(store.memberships(withTransactionID: "1001").count == 1)
    }

    @Test func aTransferredMembershipIsFoundUnderItsNewOwner() throws {
        let store = makeStore(clock: clock)
        let alices = try subscribe(store, "alice", transaction: "1000")
        let moved = try subscribe(store, "bob", transaction: "1005", original: "1000")
        #expect(moved.id == alices.id)
        #expect(store.memberships(withOriginalTransactionID: "1000").map(\.user) == ["bob"])
    }

    @Test func anErasedMembershipIsNoLongerFound() throws {
        let store = makeStore(clock: clock)
        let alices = try subscribe(store, "alice", transaction: "1000")
        let bobs = try subscribe(store, "bob", transaction: "2000")
        _ = try store.apply(renewal("evt_1", transaction: "1001"), to: alices.id)
        _ = try store.erase(.user("alice"))
        #expect(store.memberships(withTransactionID: "1000").isEmpty)
        #expect(store.memberships(withTransactionID: "1001").isEmpty)
        #expect(store.memberships(withOriginalTransactionID: "1000").isEmpty)
        #expect(store.memberships(withOriginalTransactionID: "2000").map(\.id) == [bobs.id])
    }

    @Test func aStoreRestoredFromAnImageFindsTheSameMemberships() throws {
        let store = makeStore(clock: clock)
        let membership = try subscribe(store, "alice", transaction: "1000")
        _ = try store.apply(renewal("evt_1", transaction: "1001"), to: membership.id)
        let restored = EntitlementStore(restoring: store.image(), clock: { referenceTime })
        #expect(restored.memberships(withTransactionID: "1001").map(\.id) == [membership.id])
        #expect(restored.memberships(withOriginalTransactionID: "1000").map(\.id) == [membership.id])
    }

    @Test func theIndexKeepsEverySlotOfAnIdThroughRemovals() {
        var index = TransactionIndex()
        index.add("t", slot: 4)
        index.add("t", slot: 9)
        index.add("t", slot: 4)
        index.add("t", slot: 2)
        #expect(index.slots(of: "t") == [2, 4, 9])
        index.remove("t", slot: 4)
        #expect(index.slots(of: "t") == [2, 9])
        index.remove("t", slot: 9)
        index.remove("t", slot: 7)  // never there: nothing changes
        #expect(index.slots(of: "t") == [2])
        index.remove("t", slot: 2)
        #expect(index.slots(of: "t").isEmpty)
        #expect(index.count == 0)
    }
}
