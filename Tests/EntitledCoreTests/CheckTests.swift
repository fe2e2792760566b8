import Testing

@testable import EntitledCore

/// What `check` answers: whether access is on and, when it is, the latest expiry among matching memberships.
@Suite struct CheckTests {
    @Test func checkReportsTheExpiryOfTheLongestLastingActiveMembership() throws {
        let store = makeStore()
        store.buy("prod_a", as: .user("alice"), expiry: .after(.days(1)))
        store.buy("prod_b", as: .user("alice"), expiry: .after(.days(30)))
        store.buy("prod_c", as: .device("phone"), expiry: .after(.days(7)))

        #expect(try store.access(.user("alice", device: "phone")) == .active(until: referenceTime.adding(.days(30))))
        #expect(try store.access(.user("alice")) == .active(until: referenceTime.adding(.days(30))))
        #expect(try store.access(.device("phone")) == .active(until: referenceTime.adding(.days(7))))
    }

    @Test func checkIgnoresExpiredAndRevokedMembershipsWhenChoosingTheExpiry() throws {
        let store = makeStore()
        store.buy("prod_a", as: .user("alice"), expiry: .after(.days(3)))
        store.buy("prod_a", as: .user("alice"), expiry: .at(referenceTime.adding(.days(-1))))
        let revoked = store.buy("prod_a", as: .user("alice"), expiry: .after(.days(300)))
        let revokedLifetime = store.buy("prod_a", as: .user("alice"))
        _ = try store.revoke(revoked.id, reason: "refund").value
        _ = try store.revoke(revokedLifetime.id, reason: "refund").value

        #expect(try store.access(.user("alice")) == .active(until: referenceTime.adding(.days(3))))
    }

    @Test func checkReportsNoExpiryWhenAMatchingActiveMembershipIsLifetime() throws {
        let store = makeStore()
        store.buy("prod_a", as: .user("alice"), expiry: .after(.days(30)))
        store.buy("prod_a", as: .user("alice"))
        store.buy("prod_a", as: .user("alice"), expiry: .after(.days(60)))

        #expect(try store.access(.user("alice")) == .active(until: nil))
        #expect(try store.access(.user("alice"), product: "prod_a") == .active(until: nil))
    }

    @Test func checkReportsNoExpiryWhenTheLifetimeMembershipIsTheDevicesAndTheTimedOneTheUsers() throws {
        let store = makeStore()
        store.buy("prod_a", as: .user("alice"), expiry: .after(.days(30)))
        store.buy("prod_a", as: .device("phone"))

        #expect(try store.access(.user("alice", device: "phone")) == .active(until: nil))
    }

    @Test func checkIsInactiveWhenNothingMatches() throws {
        let store = makeStore()
        #expect(try store.access(.user("nobody")) == .inactive)
        #expect(try store.access(.device("nowhere")) == .inactive)
        #expect(try store.access(.user("nobody", device: "nowhere")) == .inactive)

        store.buy("prod_a", as: .user("alice"))
        #expect(try store.access(.user("bob")) == .inactive)
    }

    @Test func aProductFilterCountsOnlyThatProduct() throws {
        let store = makeStore()
        store.buy("prod_basic", as: .user("alice"), expiry: .after(.days(10)))
        store.buy("prod_other", as: .user("alice"))

        #expect(try store.access(.user("alice"), product: "prod_basic") == .active(until: referenceTime.adding(.days(10))))
        #expect(try store.access(.user("alice"), product: "prod_other") == .active(until: nil))
        #expect(try store.access(.user("alice"), product: "prod_pro") == .inactive)
    }

    @Test func aProductNobodyHasIsInactiveRatherThanAnError() throws {
        let store = makeStore()
        store.buy("prod_a", as: .user("alice"))
        #expect(try store.access(.user("alice"), product: "prod_never_sold") == .inactive)
    }

    @Test func anEntitlementFilterCountsTheProductsTheCatalogListsForIt() throws {
        let store = makeStore()
        _ = try store.define(entitlement: "pro", products: ["prod_pro_monthly", "prod_pro_yearly"]).value
        _ = try store.define(entitlement: "basic", products: ["prod_basic"]).value
        store.buy("prod_pro_yearly", as: .user("alice"), expiry: .after(.days(365)))
        store.buy("prod_basic", as: .user("alice"))
        store.buy("prod_basic", as: .user("bob"))

        #expect(try store.check(AccessQuery(subject: .user("alice"), filter: .entitlement("pro")))
            == .active(until: referenceTime.adding(.days(365))))
        #expect(try store.check(AccessQuery(subject: .user("alice"), filter: .entitlement("basic"))) == .active(until: nil))
        #expect(try store.check(AccessQuery(subject: .user("bob"), filter: .entitlement("pro"))) == .inactive)
    }

    @Test func anEntitlementWithManyProductsRecognisesEachOfThem() throws {
        // Past a handful of products the store looks them up in a set instead of scanning the list.
        let store = makeStore()
        let products = (0..<1000).map { "prod_\($0)" }
        _ = try store.define(entitlement: "bundle", products: products).value
        store.buy("prod_0", as: .user("first"))
        store.buy("prod_737", as: .user("middle"))
        store.buy("prod_999", as: .user("last"))
        store.buy("prod_1000", as: .user("outsider"))
        for user in ["first", "middle", "last"] {
            #expect(try store.check(AccessQuery(subject: .user(user), filter: .entitlement("bundle"))).isActive)
        }
        #expect(try store.check(AccessQuery(subject: .user("outsider"), filter: .entitlement("bundle"))) == .inactive)
    }

    @Test func anEntitlementWithNoProductsIsInactive() throws {
        let store = makeStore()
        _ = try store.define(entitlement: "empty", products: []).value
        store.buy("prod_a", as: .user("alice"))
        #expect(try store.check(AccessQuery(subject: .user("alice"), filter: .entitlement("empty"))) == .inactive)
    }

    @Test func checkingAnEntitlementTheCatalogDoesNotKnowThrowsUnknownEntitlement() throws {
        let store = makeStore()
        store.buy("prod_a", as: .user("alice"))
        #expect(throws: StoreError.unknownEntitlement("gold")) {
            try store.check(AccessQuery(subject: .user("alice"), filter: .entitlement("gold")))
        }
        #expect(StoreError.unknownEntitlement("gold").code == .notFound)
        #expect(StoreError.unknownEntitlement("gold").code.rawValue == "not_found")
    }
}
