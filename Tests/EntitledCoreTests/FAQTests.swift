import Testing

@testable import EntitledCore

/// The seeds' FAQ, one test (or a pair) per answer.
@Suite struct FAQTests {
    // "When they log in on either device, both device-level memberships are claimed by their account.
    //  The next time they log in on the other device, all memberships sync."
    @Test func purchasesOnTwoDevicesBeforeLoginAreClaimedPerDeviceAndThenAllSync() throws {
        let store = makeStore()
        let onPhone = store.buy("prod_a", as: .device("phone"))
        let onTablet = store.buy("prod_b", as: .device("tablet"))

        // Login on the phone claims only the phone's membership.
        #expect(try store.claim(device: "phone", user: "alice").value == 1)
        #expect(store.visibleIDs(.user("alice")) == [onPhone.id])
        #expect(try store.hasAccess(.user("alice", device: "phone"), product: "prod_a"))
        #expect(try !store.hasAccess(.user("alice", device: "phone"), product: "prod_b"))
        #expect(store.membership(withID: onTablet.id)?.user == nil)
        #expect(try store.hasAccess(.device("tablet"), product: "prod_b"))

        // Login on the tablet claims the rest.
        #expect(try store.claim(device: "tablet", user: "alice").value == 1)
        #expect(try !store.hasAccess(.device("tablet")))

        // alice sees both from anywhere.
        #expect(Set(store.visibleIDs(.user("alice"))) == [onPhone.id, onTablet.id])
        #expect(try store.hasAccess(.user("alice"), product: "prod_a"))
        #expect(try store.hasAccess(.user("alice"), product: "prod_b"))
        #expect(try store.hasAccess(.user("alice", device: "phone"), product: "prod_b"))
        #expect(try store.hasAccess(.user("alice", device: "tablet"), product: "prod_a"))
    }

    // "Same product, same plan: Both memberships remain active. Whop does not cancel duplicates."
    @Test func theSameProductAndPlanBoughtTwiceGivesTwoActiveMembershipsAndOneOutlivesTheOther() throws {
        let clock = TestClock(referenceTime)
        let store = makeStore(clock: clock)
        let first = store.buy(
            "prod_pro", plan: "plan_monthly", as: .user("alice", device: "phone"), expiry: .after(.days(10)))
        let second = store.buy("prod_pro", plan: "plan_monthly", as: .device("tablet"), expiry: .after(.days(30)))
        #expect(try store.claim(device: "tablet", user: "alice").value == 1)

        let owned = store.memberships(visibleTo: .user("alice"))
        #expect(owned.count == 2)
        #expect(first.id != second.id)
        #expect(owned.allSatisfy { $0.status(at: clock.now) == .active })
        #expect(try store.access(.user("alice"), product: "prod_pro") == .active(until: referenceTime.adding(.days(30))))

        // The first expires; the second still grants access.
        clock.advance(by: .days(15))
        #expect(store.membership(withID: first.id)?.status(at: clock.now) == .expired)
        #expect(store.membership(withID: second.id)?.status(at: clock.now) == .active)
        #expect(try store.hasAccess(.user("alice"), product: "prod_pro"))

        clock.advance(by: .days(15))
        #expect(try !store.hasAccess(.user("alice"), product: "prod_pro"))
    }

    // "Same product, different plans: The user retains access from both. When one expires, the other continues."
    @Test func theSameProductOnTwoPlansGivesTwoActiveMembershipsAndOneOutlivesTheOther() throws {
        let clock = TestClock(referenceTime)
        let store = makeStore(clock: clock)
        let monthly = store.buy("prod_pro", plan: "plan_monthly", as: .device("phone"), expiry: .after(.days(30)))
        let yearly = store.buy("prod_pro", plan: "plan_yearly", as: .user("alice"), expiry: .after(.days(365)))
        #expect(try store.claim(device: "phone", user: "alice").value == 1)

        let owned = store.memberships(visibleTo: .user("alice"))
        #expect(Set(owned.map(\.id)) == [monthly.id, yearly.id])
        #expect(Set(owned.compactMap(\.planId)) == ["plan_monthly", "plan_yearly"])
        #expect(owned.allSatisfy { $0.isActive(at: clock.now) })

        clock.advance(by: .days(31))
        #expect(store.membership(withID: monthly.id)?.isActive(at: clock.now) == false)
        #expect(try store.access(.user("alice"), product: "prod_pro") == .active(until: referenceTime.adding(.days(365))))
    }

    // "Avoid changing user IDs. If you must, the old user retains their memberships and the new user ID starts fresh."
    @Test func aChangedUserIDStartsFreshWhileTheOldIDKeepsItsMemberships() throws {
        let store = makeStore()
        let membership = store.buy("prod_pro", as: .device("phone"))
        #expect(try store.claim(device: "phone", user: "old-id").value == 1)

        // The app now logs in with a new id on the same device.
        #expect(try store.claim(device: "phone", user: "new-id").value == 0)
        #expect(try !store.hasAccess(.user("new-id")))
        #expect(try !store.hasAccess(.user("new-id", device: "phone")))
        #expect(store.memberships(visibleTo: .user("new-id", device: "phone")).isEmpty)

        #expect(try store.hasAccess(.user("old-id")))
        #expect(store.membership(withID: membership.id)?.user == "old-id")
    }

    // "Call logOut() when switching accounts, then logIn(appUserId:) with the new user. Each user's memberships
    //  load independently."
    @Test func switchingAccountsOnOneDeviceLeavesClaimedMembershipsWithTheirUser() throws {
        let store = makeStore()
        let alicesPurchase = store.buy("prod_pro", as: .device("shared-ipad"))
        #expect(try store.claim(device: "shared-ipad", user: "alice").value == 1)

        // alice logs out, bob logs in on the same device.
        #expect(try store.claim(device: "shared-ipad", user: "bob").value == 0)
        #expect(try !store.hasAccess(.user("bob", device: "shared-ipad")))
        #expect(store.visibleIDs(.user("bob", device: "shared-ipad")).isEmpty)
        #expect(store.visibleIDs(.user("alice")) == [alicesPurchase.id])
    }

    @Test func aGuestPurchaseMadeAfterSwitchingAccountsGoesToTheNextUserWhoClaimsIt() throws {
        let store = makeStore()
        store.buy("prod_pro", as: .device("shared-ipad"))
        #expect(try store.claim(device: "shared-ipad", user: "alice").value == 1)
        #expect(try store.claim(device: "shared-ipad", user: "bob").value == 0)

        // bob logs out; someone buys on the logged-out device.
        let guestPurchase = store.buy("prod_extra", as: .device("shared-ipad"))
        #expect(try store.hasAccess(.device("shared-ipad"), product: "prod_extra"))

        // The next login (carol) claims it; bob, who was logged in before, does not get it.
        #expect(try store.claim(device: "shared-ipad", user: "carol").value == 1)
        #expect(store.membership(withID: guestPurchase.id)?.user == "carol")
        #expect(store.visibleIDs(.user("carol")) == [guestPurchase.id])
        #expect(try !store.hasAccess(.user("bob"), product: "prod_extra"))
        #expect(try !store.hasAccess(.user("alice"), product: "prod_extra"))
        #expect(try store.claim(device: "shared-ipad", user: "alice").value == 0)
    }
}
