import Testing

@testable import EntitledCore

@Suite struct ClaimTests {
    @Test func aRepeatedClaimMovesNothingAndReturnsZero() throws {
        let store = makeStore()
        store.buy("prod_a", as: .device("phone"))
        store.buy("prod_b", as: .device("phone"))

        #expect(try store.claim(device: "phone", user: "alice").value == 2)
        #expect(try store.claim(device: "phone", user: "alice").value == 0)
        #expect(store.memberships(visibleTo: .user("alice")).count == 2)
    }

    @Test func claimingADeviceWithNoPurchasesReturnsZero() throws {
        let store = makeStore()
        #expect(try store.claim(device: "unknown-device", user: "alice").value == 0)
        #expect(store.memberships(visibleTo: .user("alice")).isEmpty)
    }

    @Test func aClaimLeavesOtherDevicesGuestPurchasesAlone() throws {
        let store = makeStore()
        store.buy("prod_a", as: .device("phone"))
        let other = store.buy("prod_b", as: .device("tablet"))

        #expect(try store.claim(device: "phone", user: "alice").value == 1)
        #expect(store.membership(withID: other.id)?.user == nil)
        #expect(store.visibleIDs(.device("tablet")) == [other.id])
    }
}

@Suite struct RevokeTests {
    @Test func revokingMarksTheMembershipRevokedWithTimeAndReason() throws {
        let store = makeStore()
        let membership = store.buy("prod_a", as: .user("alice"))

        let revoked = try store.revoke(membership.id, reason: "refund").value
        #expect(revoked.id == membership.id)
        #expect(revoked.revocation == Revocation(revokedAt: referenceTime, reason: "refund"))
        #expect(revoked.status(at: referenceTime) == .revoked)
        #expect(!revoked.isActive(at: referenceTime))
        #expect(store.membership(withID: membership.id) == revoked)
        #expect(try store.access(.user("alice")) == .inactive)
    }

    @Test func aRepeatedRevokeReturnsTheMembershipUnchangedWithItsFirstTimeAndReason() throws {
        let clock = TestClock(referenceTime)
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_a", as: .user("alice"))

        clock.advance(by: .hours(1))
        let first = try store.revoke(membership.id, reason: "refund").value
        clock.advance(by: .hours(1))
        let second = try store.revoke(membership.id, reason: "chargeback").value

        #expect(second == first)
        #expect(second.revocation?.revokedAt == referenceTime.adding(.hours(1)))
        #expect(second.revocation?.reason == "refund")
        #expect(store.membership(withID: membership.id) == first)
    }

    @Test func revokingAnUnknownIDThrowsUnknownMembership() throws {
        let store = makeStore()
        let id = MembershipID(rawValue: "mem_doesnotexist0")
        #expect(throws: StoreError.unknownMembership(id)) {
            try store.revoke(id, reason: nil).value
        }
        #expect(StoreError.unknownMembership(id).code == .notFound)
    }

    @Test func aCheckOfAMomentBeforeARevocationSeesTheMembershipActiveAsItWasThen() throws {
        let clock = TestClock(referenceTime)
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_a", as: .user("alice"), expiry: .after(.days(30)))
        clock.advance(by: .days(2))
        let revoked = try store.revoke(membership.id, reason: "chargeback").value

        let beforeRevocation = referenceTime.adding(.days(1))
        // The membership as it is now is revoked whatever the moment; the store remembers it as it was.
        #expect(revoked.status(at: beforeRevocation) == .revoked)
        #expect(try store.access(.user("alice"), at: beforeRevocation) == .active(until: referenceTime.adding(.days(30))))
        #expect(try store.access(.user("alice"), product: "prod_a", at: referenceTime) == .active(until: referenceTime.adding(.days(30))))
        #expect(try store.access(.user("alice"), at: clock.now) == .inactive)
        #expect(try store.access(.user("alice"), at: referenceTime.adding(.days(2)).adding(milliseconds: -1)).isActive)
    }

    @Test func revokedStatusWinsOverExpiredStatus() throws {
        let store = makeStore()
        let membership = store.buy("prod_a", as: .user("alice"), expiry: .at(referenceTime.adding(.days(-1))))
        let revoked = try store.revoke(membership.id, reason: nil).value
        #expect(revoked.status(at: referenceTime) == .revoked)
    }

    @Test func aRevokeWithoutAReasonRecordsManual() throws {
        let store = makeStore()
        let membership = store.buy("prod_a", as: .device("phone"))
        let revoked = try store.revoke(membership.id, reason: nil).value
        #expect(revoked.revocation?.reason == "manual")
        #expect(Revocation.defaultReason == "manual")
    }
}
