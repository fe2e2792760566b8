import Testing

@testable import EntitledCore

/// `undefine` and `erase`: the changes that remove rather than add.
@Suite struct RemovalTests {
    let clock = TestClock(referenceTime)

    @Test func undefineRemovesTheEntitlementAndKeepsItInTheTrail() throws {
        let store = makeStore(clock: clock)
        try store.define(entitlement: "pro", products: ["p2", "p1"])
        clock.advance(by: .minutes(1))
        let removed = try store.undefine(entitlement: "pro", by: ChangeAuthor(actor: "ops", reason: "retired"))
        #expect(removed.value == ["p1", "p2"])
        #expect(store.catalog().isEmpty)
        #expect(throws: StoreError.unknownEntitlement("pro")) {
            try store.check(AccessQuery(subject: .user("u"), filter: .entitlement("pro"), moment: nil))
        }
        let trail = store.historyPage(ofEntitlement: "pro", limit: 10).entries
        #expect(trail.map(\.actionName) == ["undefine", "define"])
        #expect(trail.first?.context.reason == "retired")
        #expect(trail.first?.change == .catalogRemoval(entitlement: "pro", products: ["p1", "p2"]))
    }

    @Test func undefiningAnEntitlementTheCatalogLacksIsNotFound() {
        let store = makeStore(clock: clock)
        #expect(throws: StoreError.nothingToUndefine("gold")) { try store.undefine(entitlement: "gold") }
        #expect(StoreError.nothingToUndefine("gold").code == .notFound)
        // Its own message: a check's advice (define it first) makes no sense for a removal.
        #expect(StoreError.nothingToUndefine("gold").message == #"the catalog has no entitlement "gold": nothing to remove (catalog lists the entitlements)"#)
        #expect(store.sequence == 0)
    }

    @Test func anErasedUserIsAsIfTheyNeverExisted() throws {
        let store = makeStore(clock: clock)
        let guest = store.buy("prod_pro", as: .device("phone"), expiry: .after(.days(30)))
        _ = try store.claim(device: "phone", user: "alice")
        let owned = try store.grant(Grant(subject: .user("alice"), productId: "prod_basic", idempotencyKey: "k1"), by: ChangeAuthor(actor: "a", reason: "r")).value
        let other = store.buy("prod_pro", as: .user("bob"))
        clock.advance(by: .minutes(1))

        let erased = try store.erase(.user("alice"), by: ChangeAuthor(actor: "dpo", reason: "ticket 9"))
        #expect(Set(erased.value.memberships.map(\.id)) == [guest.id, owned.id])
        #expect(erased.value.historyEntries == 3)  // the guest grant, its claim, the owned grant

        #expect(try !store.hasAccess(.user("alice")))
        #expect(try !store.hasAccess(.user("alice"), at: referenceTime.adding(.seconds(1))))
        #expect(try !store.hasAccess(.device("phone"), at: referenceTime.adding(.seconds(1))))
        #expect(store.memberships(visibleTo: .user("alice")).isEmpty)
        #expect(try store.membershipsPage(visibleTo: .user("alice"), asOf: referenceTime.adding(.seconds(1)), limit: 1000).memberships.isEmpty)
        #expect(try store.historyPage(of: .user("alice"), limit: 10).entries.isEmpty)
        #expect(try store.historyPage(of: .device("phone"), limit: 10).entries.isEmpty)
        #expect(store.membership(withID: owned.id) == nil)
        #expect(try store.customerInfo(of: .user("alice")).allPurchasedProductIds.isEmpty)
        #expect(store.visibleIDs(.user("bob")) == [other.id])
        #expect(store.sizes.memberships == 1)
        #expect(store.sizes.users == 1)
        #expect(store.sizes.devices == 0)
        // The key goes with the membership: the same key is a new grant now.
        let retried = try store.grant(Grant(subject: .user("carol"), productId: "prod_basic", idempotencyKey: "k1"))
        #expect(!retried.isReplay)
        // The trail says an erasure happened, not whom it erased.
        let record = try #require(store.erasures(limit: 10).first)
        #expect(record.memberships == 2)
        #expect(record.context.actor == "dpo")
        #expect(record.context.reason == "ticket 9")
        // Its end is not told as an expiry either.
        clock.advance(by: .days(400))
        #expect(store.takeAccessEnds(through: clock.now, limit: 100, collecting: true).memberships.allSatisfy { $0.id != guest.id })
    }

    @Test func erasingADeviceRemovesItsGuestPurchasesAndDetachesOtherUsersPurchases() throws {
        let store = makeStore(clock: clock)
        let unclaimed = store.buy("prod_a", as: .device("phone"))
        let loggedIn = store.buy("prod_b", as: .user("bob", device: "phone"))
        let claimedElsewhere = store.buy("prod_c", as: .device("tablet"))
        _ = try store.claim(device: "tablet", user: "carol")
        let claimedHere = store.buy("prod_d", as: .device("phone2"))
        _ = try store.claim(device: "phone2", user: "dave")
        clock.advance(by: .minutes(1))

        let erased = try store.erase(.device("phone"))
        #expect(erased.value.memberships.map(\.id) == [unclaimed.id])
        #expect(store.visibleIDs(.device("phone")).isEmpty)
        let bobs = try #require(store.membership(withID: loggedIn.id))
        #expect(bobs.user == "bob")
        #expect(bobs.device == nil)
        #expect(try store.hasAccess(.user("bob"), product: "prod_b"))
        #expect(store.membership(withID: claimedElsewhere.id)?.device == "tablet")

        // A device that a user claimed from: the claimed membership stays the user's, without the device.
        _ = try store.erase(.device("phone2"))
        #expect(store.membership(withID: claimedHere.id)?.device == nil)
        #expect(store.membership(withID: claimedHere.id)?.user == "dave")
        #expect(try store.historyPage(of: .device("phone2"), limit: 10).entries.isEmpty)
        #expect(try store.historyPage(of: .user("dave"), limit: 10).entries.allSatisfy {
            if case .membership(_, let after) = $0.change { return after.device == nil }
            return true
        })
        #expect(store.sizes.devices == 1)  // tablet
    }

    @Test func anotherUsersRetriedGrantAfterTheDeviceIsErasedFindsItsMembership() throws {
        let store = makeStore(clock: clock)
        let bobs = try store.grant(Grant(subject: .user("bob", device: "phone"), productId: "prod_a", idempotencyKey: "order-77")).value
        let named = try store.grant(Grant(subject: .user("bob", device: "phone"), productId: "prod_b", idempotencyKey: "phone-order-78")).value
        clock.advance(by: .minutes(1))
        _ = try store.erase(.device("phone"))

        // Bob's client retries the grant it sent before the erasure, as it sent it: the same membership
        // (now without the device), not a second one.
        let retried = try store.grant(Grant(subject: .user("bob", device: "phone"), productId: "prod_a", idempotencyKey: "order-77"))
        #expect(retried.isReplay)
        #expect(retried.value.id == bobs.id)
        #expect(retried.value.device == nil)
        #expect(store.visibleIDs(.user("bob")).count == 2)
        #expect(try store.grant(Grant(subject: .user("bob"), productId: "prod_a", idempotencyKey: "order-77")).value.id == bobs.id)
        // Still a conflict when it asks for something else.
        #expect(throws: StoreError.idempotencyKeyReused(key: "order-77", membership: bobs.id)) {
            try store.grant(Grant(subject: .user("bob", device: "phone"), productId: "prod_z", idempotencyKey: "order-77"))
        }
        #expect(throws: StoreError.idempotencyKeyReused(key: "order-77", membership: bobs.id)) {
            try store.grant(Grant(subject: .user("eve", device: "phone"), productId: "prod_a", idempotencyKey: "order-77"))
        }
        // A key that holds the erased device's id goes: it would name the device.
        let fresh = try store.grant(Grant(subject: .user("bob", device: "phone"), productId: "prod_b", idempotencyKey: "phone-order-78"))
        #expect(!fresh.isReplay)
        #expect(fresh.value.id != named.id)
    }

    @Test func erasingSomeoneWhoNeverExistedIsRecordedWithZeros() throws {
        let store = makeStore(clock: clock)
        let other = store.buy("prod_a", as: .user("bob"))
        let erased = try store.erase(.user("nobody"), by: ChangeAuthor(reason: "request 1"))
        #expect(erased.value.memberships.isEmpty)
        #expect(erased.value.historyEntries == 0)
        #expect(store.sequence == 2)
        #expect(store.erasures(limit: 5).map(\.memberships) == [0])
        #expect(store.visibleIDs(.user("bob")) == [other.id])
    }

    @Test func aSubjectIndexLosesSlotsOneByOneAndGroupsAgain() {
        var index = SubjectIndex()
        for slot in [3, 7, 9] { index.add(slot, to: "k") }
        index.remove(7, from: "k")
        #expect(index.slots(of: "k") == [3, 9])
        index.remove(3, from: "k")
        #expect(index.slots(of: "k") == [9])
        index.add(12, to: "k")  // from the one-slot form back to a group, reusing the freed one
        #expect(index.slots(of: "k") == [9, 12])
        index.remove(9, from: "k")
        index.remove(12, from: "k")
        #expect(!index.contains("k"))
        index.remove(1, from: "absent")
        index.add(5, to: "other")
        index.remove(6, from: "other")  // not its slot: nothing changes
        #expect(index.slots(of: "other") == [5])
    }

    @Test func anImageWithoutErasedMembershipsRestoresTheSameState() throws {
        let store = makeStore(clock: clock)
        store.buy("prod_a", as: .user("alice"))
        let keep = try store.grant(Grant(subject: .user("bob"), productId: "prod_b", idempotencyKey: "kb"), by: ChangeAuthor(actor: "x", reason: "y")).value
        store.buy("prod_c", as: .device("d1"))
        _ = try store.claim(device: "d1", user: "carol")
        _ = try store.erase(.user("alice"))
        let image = store.image()
        #expect(image.erasedMembershipCount == 1)
        let compact = image.withoutErasedMemberships()
        #expect(compact.memberships.count == 2)
        #expect(!compact.memberships.contains { $0.user == "alice" })
        let restored = EntitlementStore(restoring: compact, clock: { referenceTime })
        #expect(restored.visibleIDs(.user("bob")) == [keep.id])
        #expect(try restored.grant(Grant(subject: .user("bob"), productId: "prod_b", idempotencyKey: "kb")).isReplay)
        #expect(try restored.historyPage(of: .user("bob"), limit: 5).entries.first?.context.actor == "x")
        #expect(try restored.historyPage(of: .device("d1"), limit: 5).entries.map(\.actionName) == ["claim", "grant"])
        #expect(restored.erasures(limit: 5).count == 1)
        // An uncompacted image restores too: the erased slot stays empty.
        let plain = EntitlementStore(restoring: image, clock: { referenceTime })
        #expect(plain.sizes.memberships == 2)
        #expect(plain.visibleIDs(.user("alice")).isEmpty)
    }
}
