import Testing

@testable import EntitledCore

@Suite struct MembershipListingTests {
    @Test func membershipsListsActiveAndInactiveOnesNewestFirst() throws {
        let clock = TestClock(referenceTime)
        let store = makeStore(clock: clock)
        let expiring = store.buy("prod_a", as: .user("alice"), expiry: .after(.hours(1)))
        clock.advance(by: .days(1))
        let lifetime = store.buy("prod_b", as: .user("alice"))
        clock.advance(by: .days(1))
        let revoked = store.buy("prod_c", as: .user("alice"))
        _ = try store.revoke(revoked.id, reason: "refund").value
        clock.advance(by: .days(1))

        let listed = store.memberships(visibleTo: .user("alice"))
        #expect(listed.map(\.id) == [revoked.id, lifetime.id, expiring.id])
        #expect(listed.map { $0.status(at: clock.now) } == [.revoked, .active, .expired])
    }

    @Test func membershipsOfAUserAndADeviceInterleaveNewestFirst() throws {
        let clock = TestClock(referenceTime)
        let store = makeStore(clock: clock)
        let oldestOwned = store.buy("prod_a", as: .user("alice"))
        clock.advance(by: .minutes(1))
        let guest = store.buy("prod_b", as: .device("phone"))
        clock.advance(by: .minutes(1))
        let newestOwned = store.buy("prod_c", as: .user("alice"))
        clock.advance(by: .minutes(1))
        _ = store.buy("prod_d", as: .device("someone-elses-phone"))
        _ = store.buy("prod_e", as: .user("bob"))

        let listed = store.memberships(visibleTo: .user("alice", device: "phone"))
        #expect(listed.map(\.id) == [newestOwned.id, guest.id, oldestOwned.id])
        #expect(listed.map(\.createdAt) == listed.map(\.createdAt).sorted(by: >))
    }

    @Test func aGrantRecordsItsFields() throws {
        let store = makeStore()
        let membership = store.buy("prod_a", plan: "plan_1", as: .user("alice", device: "phone"), source: .appStore)
        #expect(membership.productId == "prod_a")
        #expect(membership.planId == "plan_1")
        #expect(membership.source == .appStore)
        #expect(membership.createdAt == referenceTime)
        #expect(membership.revocation == nil)
        #expect(store.buy("prod_b", as: .user("alice")).source == .manual)
        #expect(store.membershipCount == 2)
    }
}

@Suite struct CatalogTests {
    /// Checks of entitlements read a list while the catalog is small and the dictionary beyond
    /// `StoreState.smallCatalogLimit`: every entitlement must resolve the same either way, also in a store
    /// restored from an image.
    @Test func everyEntitlementResolvesWhateverTheCatalogsSize() throws {
        let store = makeStore()
        store.buy("prod_3", as: .user("alice"))
        var names: [String] = []
        for index in 0..<(StoreState.smallCatalogLimit + 4) {
            let name = index == 0 ? "pro" : "ent_\(index)"
            _ = try store.define(entitlement: name, products: ["prod_\(index)"]).value
            names.append(name)
            for restored in [store, EntitlementStore(restoring: store.image(), clock: { referenceTime })] {
                for (position, name) in names.enumerated() {
                    let access = try restored.check(AccessQuery(subject: .user("alice"), filter: .entitlement(name)))
                    #expect(access.isActive == (position == 3), "\(name) with \(names.count) entitlements")
                }
                #expect(throws: StoreError.unknownEntitlement("ent_none")) {
                    try restored.check(AccessQuery(subject: .user("alice"), filter: .entitlement("ent_none")))
                }
            }
        }
    }

    @Test func defineStoresProductsSortedWithoutDuplicates() throws {
        let store = makeStore()
        let stored = try store.define(entitlement: "pro", products: ["prod_y", "prod_x", "prod_y", "prod_a"]).value
        #expect(stored == ["prod_a", "prod_x", "prod_y"])
        #expect(store.catalog().map(\.products) == [["prod_a", "prod_x", "prod_y"]])
    }

    @Test func defineReplacesTheProductsOfAnEntitlement() throws {
        let store = makeStore()
        _ = try store.define(entitlement: "pro", products: ["prod_old"]).value
        store.buy("prod_old", as: .user("alice"))
        #expect(try store.check(AccessQuery(subject: .user("alice"), filter: .entitlement("pro"))).isActive)

        #expect(try store.define(entitlement: "pro", products: ["prod_new"]).value == ["prod_new"])
        #expect(store.catalog().count == 1)
        #expect(store.catalog().first?.products == ["prod_new"])
        #expect(try store.check(AccessQuery(subject: .user("alice"), filter: .entitlement("pro"))) == .inactive)
    }

    @Test func theCatalogIsSortedByEntitlementName() throws {
        let store = makeStore()
        _ = try store.define(entitlement: "pro", products: ["p1"]).value
        _ = try store.define(entitlement: "basic", products: ["p2"]).value
        _ = try store.define(entitlement: "gold", products: []).value
        #expect(store.catalog().map(\.entitlement) == ["basic", "gold", "pro"])
        #expect(store.catalog().map(\.products) == [["p2"], [], ["p1"]])
    }

    @Test func anEmptyStoreHasAnEmptyCatalog() throws {
        #expect(makeStore().catalog().isEmpty)
    }
}
