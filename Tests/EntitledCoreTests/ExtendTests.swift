import Testing

@testable import EntitledCore

/// A support agent's manual extension (`extend`): later by a span (from the expiry, or from now once
/// expired) or until a moment; refused for what has no expiry to move; kept in the audit trail with the
/// expiry before, in checks of the past, and through a restore.
@Suite struct ExtendTests {
    let clock = TestClock(referenceTime)
    let support = ChangeAuthor(actor: "support", reason: "outage 2026-06-01")

    @Test func aSpanIsAddedToTheExpiryOfAMembershipStillActive() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_monthly", as: .user("alice"), expiry: .after(.days(10)))
        clock.advance(by: .days(2))
        let extended = try store.extend(membership.id, .by(.months(1)), by: support)
        #expect(extended.value.previousExpiresAt == referenceTime.adding(.days(10)))
        #expect(extended.value.membership.expiresAt == referenceTime.adding(.days(10)).adding(.months(1)))
        #expect(extended.sequence == 2)
        #expect(try store.access(.user("alice")) == .active(until: referenceTime.adding(.days(10)).adding(.months(1))))
        // The trail says who, why, and both expiries.
        let entry = try #require(try store.historyPage(of: .user("alice"), limit: 10).entries.first)
        #expect(entry.actionName == "extend")
        #expect(entry.context == ChangeContext(actor: "support", reason: "outage 2026-06-01", recordedAt: referenceTime.adding(.days(2))))
        #expect(entry.sequence == 2)
        guard case .membership(.extend(let previous), let after) = entry.change else {
            Issue.record("an extension's entry: \(entry.change)")
            return
        }
        #expect(previous == referenceTime.adding(.days(10)))
        #expect(after.expiresAt == extended.value.membership.expiresAt)
    }

    @Test func aSpanCountsFromNowForAMembershipThatHasExpired() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_monthly", as: .user("alice"), expiry: .after(.days(1)))
        clock.advance(by: .days(5))
        #expect(try !store.hasAccess(.user("alice")))
        let extended = try store.extend(membership.id, .by(.days(7)), by: support).value.membership
        #expect(extended.expiresAt == referenceTime.adding(.days(12)))
        #expect(try store.hasAccess(.user("alice")))
        // The days between the expiry and the extension stay without access: the past is not rewritten.
        #expect(try !store.hasAccess(.user("alice"), at: referenceTime.adding(.days(3))))
        #expect(try store.hasAccess(.user("alice"), at: referenceTime.adding(.hours(12))))
    }

    @Test func aCalendarMonthFromTheEndOfJanuaryEndsOnTheLastDayOfFebruary() throws {
        let january31 = Timestamp.rfc("2027-01-31T10:00:00Z")
        clock.set(Timestamp.rfc("2027-01-20T00:00:00Z"))
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_monthly", as: .user("alice"), expiry: .at(january31))
        #expect(try store.extend(membership.id, .by(.months(1))).value.membership.expiresAt == Timestamp.rfc("2027-02-28T10:00:00Z"))
    }

    @Test func aMomentSetsTheExpiryWhenItIsLaterThanBothTheExpiryAndNow() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_monthly", as: .user("alice"), expiry: .after(.days(10)))
        let target = Timestamp.rfc("2026-12-24T00:00:00Z")
        #expect(try store.extend(membership.id, .until(target)).value.membership.expiresAt == target)
        // The same request again cannot move it further: safe to send twice.
        #expect(throws: StoreError.cannotExtend(membership.id, .notLater(requested: target, expiresAt: target))) {
            try store.extend(membership.id, .until(target))
        }
        #expect(store.sequence == 2)
    }

    @Test func anEarlierMomentOrOneInThePastIsRefusedAndRecordsNothing() throws {
        let store = makeStore(clock: clock)
        let active = store.buy("prod_monthly", as: .user("alice"), expiry: .after(.days(10)))
        let earlier = referenceTime.adding(.days(5))
        #expect(throws: StoreError.cannotExtend(active.id, .notLater(requested: earlier, expiresAt: referenceTime.adding(.days(10))))) {
            try store.extend(active.id, .until(earlier))
        }
        let expired = store.buy("prod_monthly", as: .user("bob"), expiry: .at(referenceTime.adding(.days(-10))))
        let stillPast = referenceTime.adding(.days(-1))
        #expect(throws: StoreError.cannotExtend(expired.id, .inThePast(requested: stillPast, now: referenceTime))) {
            try store.extend(expired.id, .until(stillPast))
        }
        #expect(store.sequence == 2)
        #expect(try store.historyPage(of: .user("alice"), limit: 10).entries.map(\.actionName) == ["grant"])
    }

    @Test func aRevokedOrLifetimeMembershipHasNoExpiryToExtend() throws {
        let store = makeStore(clock: clock)
        let lifetime = store.buy("prod_lifetime", as: .user("alice"))
        #expect(throws: StoreError.cannotExtend(lifetime.id, .lifetime)) { try store.extend(lifetime.id, .by(.days(1))) }
        let refunded = store.buy("prod_monthly", as: .user("alice"), expiry: .after(.days(10)))
        let revocation = try store.revoke(refunded.id, reason: "refund").value.revocation!
        #expect(throws: StoreError.cannotExtend(refunded.id, .revoked(revocation))) { try store.extend(refunded.id, .by(.days(1))) }
        #expect(StoreError.cannotExtend(refunded.id, .revoked(revocation)).code == .conflict)
        #expect(StoreError.cannotExtend(lifetime.id, .lifetime).code == .conflict)
        let unknown = MembershipID(rawValue: "mem_0000000000000")
        #expect(throws: StoreError.unknownMembership(unknown)) { try store.extend(unknown, .by(.days(1))) }
    }

    @Test func anExtensionPastTheLastWritableTimeIsRefused() throws {
        let store = makeStore(clock: clock)
        let latest = Timestamp.rfc("9999-01-01T00:00:00Z")
        let membership = store.buy("prod_monthly", as: .user("alice"), expiry: .at(latest))
        #expect(throws: StoreError.cannotExtend(membership.id, .beyondRange(expiresAt: latest))) {
            try store.extend(membership.id, .by(.years(2)))
        }
        #expect(StoreError.cannotExtend(membership.id, .beyondRange(expiresAt: latest)).code == .invalid)
    }

    @Test func aStoreRenewalAfterAnExtensionSetsTheExpiryTheStoreReports() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_monthly", as: .user("alice"), expiry: .after(.days(30)))
        _ = try store.extend(membership.id, .by(.days(10)), by: support)
        clock.advance(by: .days(29))
        let renewedUntil = referenceTime.adding(.days(60))
        let renewal = LifecycleEvent(id: "evt_renewal", time: referenceTime.adding(.days(29)), kind: .renewal(expiresAt: renewedUntil))
        let renewed = try store.apply(renewal, to: membership.id).value.membership
        #expect(renewed.expiresAt == renewedUntil)
        #expect(try store.historyPage(of: .user("alice"), limit: 10).entries.map(\.actionName) == ["renewal", "extend", "grant"])
    }

    @Test func anExtensionSurvivesARestoreFromAnImage() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_monthly", as: .user("alice"), expiry: .after(.days(1)))
        clock.advance(by: .days(3))
        let extended = try store.extend(membership.id, .by(.days(7)), by: support).value.membership
        let restored = EntitlementStore(restoring: store.image(), clock: { clock.now })
        #expect(restored.membership(withID: membership.id) == extended)
        #expect(try restored.hasAccess(.user("alice")))
        #expect(try !restored.hasAccess(.user("alice"), at: referenceTime.adding(.days(2))))
        #expect(try restored.historyPage(of: .user("alice"), limit: 10).entries.map(\.actionName) == ["extend", "grant"])
    }

    @Test func erasingTheOwnerTakesTheExtensionsOutOfTheTrail() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_monthly", as: .user("alice"), expiry: .after(.days(1)))
        _ = try store.extend(membership.id, .by(.days(7)), by: support)
        let erasure = try store.erase(.user("alice")).value
        #expect(erasure.memberships.map(\.id) == [membership.id])
        #expect(erasure.historyEntries == 2)
        #expect(try store.historyPage(of: .user("alice"), limit: 10).entries.isEmpty)
    }
}
