import Testing

@testable import EntitledCore

@Suite struct StoreSizesTests {
    @Test func sizesCountOwnersGuestDevicesMembershipsAndEntitlements() throws {
        let store = makeStore()
        #expect(store.sizes == StoreSizes(users: 0, devices: 0, memberships: 0, entitlements: 0))
        store.buy("prod_a", as: .user("alice"))
        store.buy("prod_b", as: .user("alice"))
        store.buy("prod_a", as: .device("phone"))
        store.buy("prod_a", as: .device("tablet"))
        _ = try store.define(entitlement: "premium", products: ["prod_a"])
        #expect(store.sizes == StoreSizes(users: 1, devices: 2, memberships: 4, entitlements: 1))
    }

    @Test func aClaimMakesItsUserAnOwnerAndKeepsItsDeviceCounted() throws {
        let store = makeStore()
        store.buy("prod_a", as: .device("phone"))
        #expect(try store.claim(device: "phone", user: "bob").value == 1)
        #expect(store.sizes == StoreSizes(users: 1, devices: 1, memberships: 1, entitlements: 0))
        // A purchase on the device after the claim: the device is in both indexes, counted once.
        store.buy("prod_b", as: .device("phone"))
        #expect(store.sizes.devices == 1)
    }

    @Test func aStoreRestoredFromItsImageReportsTheSameSizes() throws {
        let store = makeStore()
        store.buy("prod_a", as: .device("phone"))
        _ = try store.claim(device: "phone", user: "bob")
        store.buy("prod_b", as: .device("phone"))
        store.buy("prod_b", as: .device("watch"))
        store.buy("prod_c", as: .user("carol"))
        _ = try store.define(entitlement: "premium", products: ["prod_a", "prod_b"])
        let restored = EntitlementStore(restoring: store.image(), clock: { referenceTime })
        #expect(restored.sizes == store.sizes)
        #expect(restored.sizes == StoreSizes(users: 2, devices: 2, memberships: 4, entitlements: 1))
    }
}
