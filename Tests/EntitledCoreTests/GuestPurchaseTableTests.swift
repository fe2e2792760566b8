import Testing

@testable import EntitledCore

/// The seeds' table "How Guest Purchases Work", one test per row.
@Suite struct GuestPurchaseTableTests {
    // Row 1: "Purchase without login — Membership tied to device ID".
    @Test func aPurchaseWithoutLoginIsTiedToTheDeviceAndVisibleToNoUser() throws {
        let store = makeStore()
        let membership = store.buy("prod_pro", as: .device("device-1"))

        #expect(membership.device == "device-1")
        #expect(membership.user == nil)
        #expect(membership.isUnclaimed)

        #expect(try store.hasAccess(.device("device-1")))
        #expect(try store.hasAccess(.device("device-1"), product: "prod_pro"))
        #expect(store.visibleIDs(.device("device-1")) == [membership.id])

        #expect(try !store.hasAccess(.user("alice")))
        #expect(try !store.hasAccess(.user("alice", device: "device-2")))
        #expect(store.visibleIDs(.user("alice")).isEmpty)
        #expect(try !store.hasAccess(.device("device-2")))
    }

    // Row 2: "Login after purchase — Membership claimed by user account".
    @Test func loggingInAfterAGuestPurchaseGivesTheMembershipToTheUser() throws {
        let store = makeStore()
        let membership = store.buy("prod_pro", as: .device("device-1"))

        #expect(try store.claim(device: "device-1", user: "alice").value == 1)

        let claimed = try #require(store.membership(withID: membership.id))
        #expect(claimed.user == "alice")
        #expect(claimed.device == "device-1")  // where it was bought is kept
        #expect(try store.hasAccess(.user("alice")))
        #expect(try store.hasAccess(.user("alice", device: "device-1"), product: "prod_pro"))
        #expect(store.visibleIDs(.user("alice")) == [membership.id])

        // Now owned by alice: the device alone (a logged-out app) no longer sees it.
        #expect(try !store.hasAccess(.device("device-1")))
        #expect(store.visibleIDs(.device("device-1")).isEmpty)
    }

    // Row 3: "Same user, new device — Memberships sync after login".
    @Test func theSameUserOnANewDeviceSeesTheirMembershipsAfterLogin() throws {
        let store = makeStore()
        let membership = store.buy("prod_pro", as: .device("phone"))
        #expect(try store.claim(device: "phone", user: "alice").value == 1)

        // The new device before login sees nothing.
        #expect(try !store.hasAccess(.device("tablet")))

        // Login on the new device: nothing to claim there, but alice's memberships come with her.
        #expect(try store.claim(device: "tablet", user: "alice").value == 0)
        #expect(try store.hasAccess(.user("alice", device: "tablet")))
        #expect(try store.hasAccess(.user("alice", device: "tablet"), product: "prod_pro"))
        #expect(store.visibleIDs(.user("alice", device: "tablet")) == [membership.id])
    }

    // Row 4: "Logout — Device memberships remain; user memberships hidden".
    @Test func afterLogoutTheDeviceKeepsItsNeverClaimedMembershipsAndHidesClaimedOnes() throws {
        let store = makeStore()
        let claimedGuestPurchase = store.buy("prod_claimed", as: .device("device-1"))
        #expect(try store.claim(device: "device-1", user: "alice").value == 1)
        let boughtWhileLoggedIn = store.buy("prod_logged_in", as: .user("alice", device: "device-1"))
        // alice logs out; a purchase on the logged-out device nobody claims.
        let neverClaimed = store.buy("prod_guest", as: .device("device-1"))

        // The logged-out app checks with its device only.
        let loggedOut = Subject.device("device-1")
        #expect(try store.hasAccess(loggedOut))
        #expect(try store.hasAccess(loggedOut, product: "prod_guest"))
        #expect(try !store.hasAccess(loggedOut, product: "prod_claimed"))
        #expect(try !store.hasAccess(loggedOut, product: "prod_logged_in"))
        #expect(store.visibleIDs(loggedOut) == [neverClaimed.id])

        // alice still has hers when logged in again (the never-claimed one is not hers).
        #expect(store.visibleIDs(.user("alice")) == [boughtWhileLoggedIn.id, claimedGuestPurchase.id])
    }

    @Test func afterLogoutADeviceWhoseMembershipsWereAllClaimedHasNoAccess() throws {
        let store = makeStore()
        store.buy("prod_pro", as: .device("device-1"))
        #expect(try store.claim(device: "device-1", user: "alice").value == 1)

        #expect(try store.access(.device("device-1")) == .inactive)
        #expect(store.memberships(visibleTo: .device("device-1")).isEmpty)
    }

    @Test func aPurchaseMadeWhileLoggedInBelongsToTheUserAndNotToTheDeviceAlone() throws {
        let store = makeStore()
        let membership = store.buy("prod_pro", as: .user("alice", device: "device-1"))

        #expect(membership.user == "alice")
        #expect(membership.device == "device-1")
        #expect(!membership.isUnclaimed)
        #expect(try store.hasAccess(.user("alice")))
        #expect(try store.hasAccess(.user("alice", device: "device-1")))
        #expect(try !store.hasAccess(.device("device-1")))
        #expect(store.visibleIDs(.device("device-1")).isEmpty)

        // Another user logging in on that device cannot claim it.
        #expect(try store.claim(device: "device-1", user: "bob").value == 0)
        #expect(store.membership(withID: membership.id)?.user == "alice")
        #expect(try !store.hasAccess(.user("bob", device: "device-1")))
    }
}
