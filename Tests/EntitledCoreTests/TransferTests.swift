import Testing

@testable import EntitledCore

/// A purchase reported for a second user (a restore on another account) follows the transfer rule, and
/// the move is in both users' history, survives a restore from an image, and an erasure of either user.
@Suite struct TransferTests {
    let clock = TestClock(referenceTime)

    func purchase(
        _ subject: Subject, transaction: String, original: String? = nil, rule: TransferRule = .transfer, in store: EntitlementStore
    ) throws(StoreError) -> Recorded<Membership> {
        try store.grant(
            Grant(
                subject: subject, productId: "prod_monthly", expiry: .after(.days(30)),
                transaction: Grant.Transaction(id: transaction, originalTransactionId: original)
            ),
            by: ChangeAuthor(actor: "stores", reason: "restore"), transfers: rule
        )
    }

    @Test func aPurchaseReportedForAnotherUserMovesToThemUnderTheTransferRule() throws {
        let store = makeStore(clock: clock)
        let alices = try purchase(.user("alice"), transaction: "1000", in: store).value
        clock.advance(by: .days(1))
        let moved = try purchase(.user("bob"), transaction: "1000", in: store)
        #expect(moved.value.id == alices.id)
        #expect(moved.value.user == "bob")
        #expect(moved.transferredFrom == .user("alice"))
        #expect(!moved.isReplay)
        #expect(store.membershipCount == 1)
        #expect(try store.hasAccess(.user("bob")))
        #expect(try !store.hasAccess(.user("alice")))
        #expect(store.memberships(visibleTo: .user("alice")).isEmpty)
        // Alice had it until the transfer: checks of the past and her history say so.
        #expect(try store.hasAccess(.user("alice"), at: referenceTime.adding(.hours(1))))
        #expect(try !store.hasAccess(.user("bob"), at: referenceTime.adding(.hours(1))))
        let alicesTrail = try store.historyPage(of: .user("alice"), limit: 10).entries
        #expect(alicesTrail.map(\.actionName) == ["transfer", "grant"])
        #expect(alicesTrail.first?.context.reason == "restore")
        #expect(try store.historyPage(of: .user("bob"), limit: 10).entries.map(\.actionName) == ["transfer", "grant"])
        #expect(store.formerOwner(of: alices.id) == .user("alice"))
    }

    @Test func theKeepRuleRefusesAndLeavesThePurchaseWithItsOwner() throws {
        let store = makeStore(clock: clock)
        let alices = try purchase(.user("alice"), transaction: "1000", in: store).value
        let sequence = store.sequence
        #expect(throws: StoreError.purchaseOwnedElsewhere(originalTransactionId: "1000", membership: alices.id, rule: .keep)) {
            try purchase(.user("bob"), transaction: "1001", original: "1000", rule: .keep, in: store)
        }
        #expect(store.sequence == sequence)
        #expect(try store.hasAccess(.user("alice")))
        #expect(try !store.hasAccess(.user("bob")))
    }

    @Test func aPurchaseReportedAgainForItsOwnerCreatesNothing() throws {
        let store = makeStore(clock: clock)
        let first = try purchase(.user("alice"), transaction: "1000", in: store).value
        let again = try purchase(.user("alice", device: "phone"), transaction: "1003", original: "1000", in: store)
        #expect(again.isReplay)
        #expect(again.value == first)
        #expect(store.membershipCount == 1)
    }

    @Test func aGuestPurchaseReportedForAUserMovesLikeAClaim() throws {
        let store = makeStore(clock: clock)
        let guest = try purchase(.device("phone"), transaction: "1000", in: store).value
        clock.advance(by: .days(1))
        let moved = try purchase(.user("alice"), transaction: "1000", in: store)
        #expect(moved.value.id == guest.id)
        #expect(moved.transferredFrom == .device("phone"))
        #expect(try store.hasAccess(.user("alice")))
        // The device no longer sees it unclaimed, but saw it until then.
        #expect(try !store.hasAccess(.device("phone")))
        #expect(try store.hasAccess(.device("phone"), at: referenceTime))
        #expect(try store.historyPage(of: .device("phone"), limit: 10).entries.map(\.actionName) == ["transfer", "grant"])
    }

    @Test func aGuestGrantCannotTakeAUsersPurchase() throws {
        let store = makeStore(clock: clock)
        let alices = try purchase(.user("alice"), transaction: "1000", in: store).value
        #expect(throws: StoreError.purchaseOwnedElsewhere(originalTransactionId: "1000", membership: alices.id, rule: nil)) {
            try purchase(.device("tablet"), transaction: "1000", in: store)
        }
    }

    @Test func aTransferBackAndForthKeepsBothUsersHistories() throws {
        let store = makeStore(clock: clock)
        let membership = try purchase(.user("alice"), transaction: "1000", in: store).value
        clock.advance(by: .days(1))
        _ = try purchase(.user("bob"), transaction: "1000", in: store)
        clock.advance(by: .days(1))
        let back = try purchase(.user("alice"), transaction: "1000", in: store)
        #expect(back.transferredFrom == .user("bob"))
        #expect(try store.hasAccess(.user("alice")))
        #expect(try store.hasAccess(.user("bob"), at: referenceTime.adding(.days(1)).adding(.hours(1))))
        #expect(try store.historyPage(of: .user("bob"), limit: 10).entries.map(\.actionName) == ["transfer", "transfer", "grant"])
        #expect(store.memberships(visibleTo: .user("alice")).map(\.id) == [membership.id])
    }

    @Test func aStoreRestoredFromAnImageKnowsTheFormerOwner() throws {
        let store = makeStore(clock: clock)
        let membership = try purchase(.user("alice"), transaction: "1000", in: store).value
        clock.advance(by: .days(1))
        _ = try purchase(.user("bob"), transaction: "1000", in: store)
        let restored = EntitlementStore(restoring: store.image(), clock: { referenceTime.adding(.days(2)) })
        #expect(try restored.hasAccess(.user("bob")))
        #expect(try restored.hasAccess(.user("alice"), at: referenceTime.adding(.hours(1))))
        #expect(try restored.historyPage(of: .user("alice"), limit: 10).entries.map(\.actionName) == ["transfer", "grant"])
        #expect(restored.formerOwner(of: membership.id) == .user("alice"))
    }

    @Test func erasingTheFormerOwnerLeavesTheMembershipWithTheNewOwnerWithoutTheirName() throws {
        let store = makeStore(clock: clock)
        let membership = try purchase(.user("alice"), transaction: "1000", in: store).value
        clock.advance(by: .days(1))
        _ = try purchase(.user("bob"), transaction: "1000", in: store)
        let erased = try store.erase(.user("alice")).value
        #expect(erased.memberships.isEmpty)
        #expect(try store.hasAccess(.user("bob")))
        #expect(try store.historyPage(of: .user("alice"), limit: 10).entries.isEmpty)
        #expect(store.formerOwner(of: membership.id) == nil)
        let bobsTrail = try store.historyPage(of: .user("bob"), limit: 10).entries
        #expect(bobsTrail.map(\.actionName) == ["transfer", "grant"])
        #expect(!"\(bobsTrail)".contains("alice"))
    }

    @Test func erasingTheNewOwnerRemovesItFromTheFormerOwnersPastToo() throws {
        let store = makeStore(clock: clock)
        _ = try purchase(.user("alice"), transaction: "1000", in: store)
        clock.advance(by: .days(1))
        _ = try purchase(.user("bob"), transaction: "1000", in: store)
        _ = try store.erase(.user("bob"))
        #expect(try store.historyPage(of: .user("alice"), limit: 10).entries.isEmpty)
        #expect(try !store.hasAccess(.user("alice"), at: referenceTime.adding(.hours(1))))
        #expect(store.memberships(withOriginalTransactionID: "1000").isEmpty)
    }
}
