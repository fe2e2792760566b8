import Testing

@testable import EntitledCore

/// `isActive` and `status` are computed at the moment asked about: active while `expiresAt` is later.
@Suite struct ExpiryTests {
    let expiry = Timestamp.rfc("2026-12-21T00:00:00Z")

    @Test func aMembershipIsActiveOneMillisecondBeforeItExpires() throws {
        let clock = TestClock(expiry.adding(milliseconds: -1))
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_pro", as: .user("alice"), expiry: .at(expiry))

        #expect(membership.status(at: clock.now) == .active)
        #expect(membership.isActive(at: clock.now))
        #expect(try store.access(.user("alice")) == .active(until: expiry))
    }

    @Test func aMembershipIsExpiredAtExactlyItsExpiresAt() throws {
        let clock = TestClock(expiry.adding(milliseconds: -1))
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_pro", as: .user("alice"), expiry: .at(expiry))

        clock.set(expiry)
        #expect(membership.status(at: expiry) == .expired)
        #expect(!membership.isActive(at: expiry))
        #expect(try store.access(.user("alice")) == .inactive)
    }

    @Test func aMembershipIsExpiredOneMillisecondAfterItsExpiresAt() throws {
        let clock = TestClock(expiry.adding(milliseconds: -1))
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_pro", as: .user("alice"), expiry: .at(expiry))

        clock.set(expiry.adding(milliseconds: 1))
        #expect(membership.status(at: clock.now) == .expired)
        #expect(try store.access(.user("alice")) == .inactive)
        #expect(try store.access(.user("alice"), product: "prod_pro") == .inactive)
    }

    @Test func aLifetimeMembershipIsActiveFarInTheFuture() throws {
        let store = makeStore()
        let membership = store.buy("prod_pro", as: .user("alice"))
        let farFuture = Timestamp.rfc("9999-12-31T23:59:59.999Z")

        #expect(membership.expiresAt == nil)
        #expect(membership.status(at: farFuture) == .active)
        #expect(try store.access(.user("alice"), at: farFuture) == .active(until: nil))
    }

    @Test func theMomentParameterAnswersForThePastAndTheFutureInsteadOfNow() throws {
        // Bought 60 days before the expiry; now is a day after it.
        let clock = TestClock(expiry.adding(.days(-60)))
        let store = makeStore(clock: clock)
        store.buy("prod_pro", as: .user("alice"), expiry: .at(expiry))
        clock.set(expiry.adding(.days(1)))

        #expect(try store.access(.user("alice")) == .inactive)
        #expect(try store.access(.user("alice"), at: expiry.adding(milliseconds: -1)) == .active(until: expiry))
        #expect(try store.access(.user("alice"), at: expiry) == .inactive)
        #expect(try store.hasAccess(.user("alice"), product: "prod_pro", at: expiry.adding(.days(-30))))
    }

    @Test func aMomentBeforeAMembershipWasGrantedDoesNotSeeIt() throws {
        // An import: granted today with an expiry that has passed, and one that has not.
        let store = makeStore(at: referenceTime)
        store.buy("prod_pro", as: .user("alice"), expiry: .at(referenceTime.adding(.days(30))))

        #expect(try store.access(.user("alice")) == .active(until: referenceTime.adding(.days(30))))
        #expect(try store.access(.user("alice"), at: referenceTime.adding(milliseconds: -1)) == .inactive)
    }

    @Test func theMomentParameterCanAskAboutAFutureWhenAnActiveMembershipHasExpired() throws {
        let store = makeStore(at: expiry.adding(.days(-1)))
        store.buy("prod_pro", as: .user("alice"), expiry: .at(expiry))

        #expect(try store.hasAccess(.user("alice")))
        #expect(try !store.hasAccess(.user("alice"), at: expiry.adding(.days(1))))
    }

    @Test func aDurationGrantExpiresItsSpanAfterItsCreation() throws {
        let clock = TestClock(referenceTime)
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_pro", as: .device("phone"), expiry: .after(.days(30)))
        let end = referenceTime.adding(.days(30))

        #expect(membership.createdAt == referenceTime)
        #expect(membership.expiresAt == end)
        #expect(end.millisecondsSinceEpoch - referenceTime.millisecondsSinceEpoch == 30 * 86_400_000)

        clock.set(end.adding(milliseconds: -1))
        #expect(try store.hasAccess(.device("phone")))
        clock.set(end)
        #expect(try !store.hasAccess(.device("phone")))
    }

    @Test func aGrantWithAnExpiryInThePastIsAlreadyExpired() throws {
        let store = makeStore()
        let membership = store.buy("prod_pro", as: .user("alice"), expiry: .at(referenceTime.adding(.days(-1))))

        #expect(membership.status(at: referenceTime) == .expired)
        #expect(try store.access(.user("alice")) == .inactive)
        #expect(store.visibleIDs(.user("alice")) == [membership.id])
    }
}
