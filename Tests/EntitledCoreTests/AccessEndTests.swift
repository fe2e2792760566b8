import Testing

@testable import EntitledCore

/// The store's schedule of access ends (`EntitlementStore.takeAccessEnds`): what `expired` pushes tell.
@Suite struct AccessEndTests {
    let clock = TestClock(referenceTime)

    private func ended(_ store: EntitlementStore, limit: Int = 10_000) -> [MembershipID] {
        store.takeAccessEnds(through: clock.now, limit: limit, collecting: true).memberships.map(\.id)
    }

    @Test func anEndIsToldOnceWhenItComesAndNotBefore() throws {
        let store = makeStore(clock: clock)
        let soon = store.buy("prod_a", as: .user("alice"), expiry: .after(.minutes(5)))
        let later = store.buy("prod_b", as: .user("bob"), expiry: .after(.days(3)))
        _ = store.buy("prod_c", as: .user("carol"))  // for life: never told
        #expect(store.nextAccessEndMilliseconds <= soon.expiresAt!.millisecondsSinceEpoch)
        #expect(ended(store).isEmpty)
        clock.advance(by: .minutes(5))
        #expect(ended(store) == [soon.id])
        #expect(ended(store).isEmpty)
        clock.advance(by: .days(3))
        #expect(ended(store) == [later.id])
        clock.advance(by: .days(400))
        #expect(ended(store).isEmpty)
        #expect(store.nextAccessEndMilliseconds == .max)
    }

    @Test func aRenewalAnExtensionAndARevocationMoveOrCancelTheEnd() throws {
        let store = makeStore(clock: clock)
        let renewed = store.buy("prod_a", as: .user("alice"), expiry: .after(.days(30)))
        let extended = store.buy("prod_b", as: .user("bob"), expiry: .after(.days(30)))
        let revoked = store.buy("prod_c", as: .user("carol"), expiry: .after(.days(30)))
        clock.advance(by: .days(29))
        let renewal = LifecycleEvent(id: "evt_1", time: clock.now, kind: .renewal(expiresAt: referenceTime.adding(.days(60))))
        _ = try store.apply(renewal, to: renewed.id)
        _ = try store.extend(extended.id, .by(.days(10)))
        _ = try store.revoke(revoked.id, reason: "refund")
        clock.advance(by: .days(1))
        #expect(ended(store).isEmpty)
        clock.advance(by: .days(10))
        #expect(ended(store) == [extended.id])
        clock.advance(by: .days(20))
        #expect(ended(store) == [renewed.id])
    }

    @Test func anEndMovedAwayAndBackIsToldOnce() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_a", as: .user("alice"), expiry: .after(.minutes(1)))
        let first = try #require(membership.expiresAt)
        // Later, then back to the same moment through an event: two entries for one end.
        _ = try store.apply(LifecycleEvent(id: "evt_1", time: clock.now, kind: .renewal(expiresAt: first.adding(.minutes(1)))), to: membership.id)
        _ = try store.apply(LifecycleEvent(id: "evt_2", time: clock.now, kind: .renewal(expiresAt: first)), to: membership.id)
        clock.advance(by: .minutes(3))
        #expect(ended(store, limit: 1) == [])  // the first entry looked at is the moved one
        #expect(ended(store) == [membership.id])
        #expect(ended(store).isEmpty)
    }

    @Test func manyEndsAtOneMomentAreToldInBoundedBatchesEachOnce() throws {
        let store = makeStore(clock: clock)
        let end = referenceTime.adding(.hours(2))
        var ids: Set<MembershipID> = []
        for index in 0..<3_000 {
            ids.insert(store.buy("prod_a", as: .user("u\(index)"), expiry: .at(end)).id)
        }
        clock.set(end)
        var told: [MembershipID] = []
        var calls = 0
        var taken: AccessEnds
        repeat {
            taken = store.takeAccessEnds(through: clock.now, limit: 1_024, collecting: true)
            #expect(taken.memberships.count <= 1_024)
            told += taken.memberships.map(\.id)
            calls += 1
        } while taken.more
        #expect(calls >= 3)
        #expect(told.count == 3_000)
        #expect(Set(told) == ids)
    }

    @Test func aLoadedStoreTellsOnlyTheEndsAfterItLoadedAndAnEndAChangeMadeAtOnceIsNotToldAgain() throws {
        let store = makeStore(clock: clock)
        let gone = store.buy("prod_a", as: .user("alice"), expiry: .after(.hours(1)))
        let coming = store.buy("prod_b", as: .user("bob"), expiry: .after(.days(2)))
        // An event that ends access at once: told with the event, not again as an expiry.
        let cut = store.buy("prod_c", as: .user("carol"), expiry: .after(.days(2)))
        _ = try store.apply(LifecycleEvent(id: "evt_1", time: clock.now, kind: .expiration), to: cut.id)
        clock.advance(by: .days(1))
        let restored = EntitlementStore(restoring: store.image(), clock: { clock.now })
        #expect(ended(restored).isEmpty)
        clock.advance(by: .days(2))
        // Not `gone`, which ended before the load, nor `cut`.
        #expect(ended(restored) == [coming.id])
        #expect(gone.expiresAt! < referenceTime.adding(.days(1)))
    }

    @Test func endsSpreadOverDaysAreEachToldOnceNeitherEarlyNorLateWhateverTheSteps() throws {
        let store = makeStore(clock: clock)
        var generator = SystemRandomNumberGenerator()
        var ends: [MembershipID: Timestamp] = [:]
        for index in 0..<2_000 {
            let end = referenceTime.adding(milliseconds: Int64.random(in: 1...(3 * 86_400_000), using: &generator))
            ends[store.buy("prod_a", as: .user("u\(index)"), expiry: .at(end)).id] = end
        }
        var told: [MembershipID: Timestamp] = [:]
        while clock.now < referenceTime.adding(.days(4)) {
            clock.advance(by: TimeSpan(milliseconds: Int64.random(in: 1...(7_200_000), using: &generator)))
            var taken: AccessEnds
            repeat {
                taken = store.takeAccessEnds(through: clock.now, limit: Int.random(in: 1...300, using: &generator), collecting: true)
                for membership in taken.memberships {
                    #expect(told[membership.id] == nil, "told twice")
                    #expect(try #require(ends[membership.id]) <= clock.now, "told before its end")
                    told[membership.id] = clock.now
                }
            } while taken.more
            // Nor late: every end passed by now is told.
            #expect(ends.values.filter { $0 <= clock.now }.count == told.count)
        }
        #expect(told.count == ends.count)
    }

    @Test func takingWithoutCollectingPassesEndsOverWithoutCopies() throws {
        let store = makeStore(clock: clock)
        _ = store.buy("prod_a", as: .user("alice"), expiry: .after(.minutes(5)))
        clock.advance(by: .minutes(6))
        let passed = store.takeAccessEnds(through: clock.now, limit: 10, collecting: false)
        #expect(passed.memberships.isEmpty)
        #expect(!passed.more)
        #expect(ended(store).isEmpty)
    }
}
