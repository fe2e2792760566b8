import Testing

@testable import EntitledCore

/// The compact index checks read (slot lists kept inline, 16-byte access records, product codes) answers
/// exactly what the memberships say, in every shape a subject's memberships can take.
@Suite struct AccessIndexTests {
    @Test func anEntitlementWithManyProductsUnlocksEachOfThemAndNothingElse() throws {
        let store = makeStore()
        let products = (0..<40).map { "prod_\($0)" }
        _ = try store.define(entitlement: "bundle", products: products)
        for (index, product) in products.enumerated() where index % 7 == 0 {
            store.buy(product, as: .user("u\(index)"))
        }
        store.buy("prod_other", as: .user("outsider"))
        for index in 0..<40 {
            let result = try store.check(AccessQuery(subject: .user("u\(index)"), filter: .entitlement("bundle")))
            #expect(result.isActive == (index % 7 == 0), "user u\(index)")
        }
        #expect(try store.check(AccessQuery(subject: .user("outsider"), filter: .entitlement("bundle"))) == .inactive)
    }

    @Test func aUserWithManyMembershipsSeesTheLongestAndLosesOnlyWhatIsRevoked() throws {
        let store = makeStore()
        var bought: [Membership] = []
        for days in 1...9 {
            bought.append(store.buy("prod_a", as: .user("alice"), expiry: .after(.days(Int64(days)))))
        }
        #expect(try store.access(.user("alice")) == .active(until: referenceTime.adding(.days(9))))
        _ = try store.revoke(bought[8].id, reason: "refund").value
        _ = try store.revoke(bought[7].id, reason: "refund").value
        #expect(try store.access(.user("alice")) == .active(until: referenceTime.adding(.days(7))))
        #expect(store.visibleIDs(.user("alice")).count == 9)
    }

    @Test func claimingADeviceWithSeveralPurchasesAddsThemToAUserWhoAlreadyHasSome() throws {
        let store = makeStore()
        store.buy("prod_a", as: .user("bob"), expiry: .after(.days(2)))
        store.buy("prod_a", as: .user("bob"), expiry: .after(.days(3)))
        for days in [10, 20, 30] {
            store.buy("prod_b", as: .device("tablet"), expiry: .after(.days(Int64(days))))
        }
        _ = try store.claim(device: "tablet", user: "bob").value
        #expect(store.visibleIDs(.user("bob")).count == 5)
        #expect(store.visibleIDs(.device("tablet")).isEmpty)
        #expect(try store.access(.user("bob"), product: "prod_b") == .active(until: referenceTime.adding(.days(30))))
        #expect(try store.access(.user("bob"), product: "prod_a") == .active(until: referenceTime.adding(.days(3))))
        #expect(try store.access(.device("tablet")) == .inactive)
    }

    @Test func aProductNobodyEverHeldIsInactiveUntilItIsGranted() throws {
        let store = makeStore()
        store.buy("prod_a", as: .user("carol"))
        #expect(try store.access(.user("carol"), product: "prod_never") == .inactive)
        store.buy("prod_never", as: .user("carol"), expiry: .after(.days(1)))
        #expect(try store.access(.user("carol"), product: "prod_never") == .active(until: referenceTime.adding(.days(1))))
    }

    @Test func aStoreRestoredFromAnImageAnswersEveryCheckAsTheOriginal() throws {
        let store = makeStore()
        _ = try store.define(entitlement: "pro", products: ["prod_m", "prod_y"])
        let revoked = store.buy("prod_y", as: .user("dave"), expiry: .after(.days(365)))
        store.buy("prod_m", as: .user("dave"), expiry: .after(.days(30)))
        store.buy("prod_m", as: .device("phone"))
        store.buy("prod_x", as: .user("erin"), expiry: .at(referenceTime.adding(.days(-1))))
        _ = try store.revoke(revoked.id, reason: "chargeback").value
        let restored = EntitlementStore(restoring: store.image(), clock: { referenceTime })
        let subjects: [Subject] = [.user("dave"), .device("phone"), .user("dave", device: "phone"), .user("erin"), .user("nobody")]
        let filters: [AccessFilter] = [.anyProduct, .product("prod_m"), .product("prod_y"), .product("prod_x"), .entitlement("pro")]
        for subject in subjects {
            for filter in filters {
                let query = AccessQuery(subject: subject, filter: filter)
                #expect(try restored.check(query) == store.check(query), "\(subject) \(filter)")
            }
        }
    }
}
