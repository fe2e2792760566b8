import Testing

@testable import EntitledCore

/// The audit trail and checks of the past.
@Suite struct HistoryTests {
    let clock = TestClock(referenceTime)

    @Test func aSubjectsTrailListsEveryChangeNewestFirstWithWhoWhenAndWhy() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_pro", as: .device("phone"), expiry: .after(.days(30)))
        clock.advance(by: .minutes(1))
        _ = try store.claim(device: "phone", user: "alice", by: ChangeAuthor(actor: "support", reason: "ticket 12"))
        clock.advance(by: .minutes(1))
        let renewal = LifecycleEvent(id: "evt_1", time: clock.now, kind: .renewal(expiresAt: referenceTime.adding(.days(60))))
        _ = try store.apply(renewal, to: membership.id)
        clock.advance(by: .minutes(1))
        _ = try store.revoke(membership.id, reason: "chargeback")

        let trail = try store.historyPage(of: .user("alice"), limit: 10).entries
        #expect(trail.map(\.actionName) == ["revoke", "renewal", "claim", "grant"])
        #expect(trail.map(\.context.actor) == ["local", "local", "support", "local"])
        #expect(trail.map(\.context.reason) == ["chargeback", nil, "ticket 12", nil])
        #expect(trail.map(\.context.recordedAt) == [3, 2, 1, 0].map { referenceTime.adding(.minutes($0)) })
        #expect(trail.last?.sequence == nil)  // a plain grant keeps no revision
        #expect(trail.first?.sequence == 4)
        guard case .membership(_, let afterClaim) = trail[2].change else { Issue.record("not a membership entry"); return }
        #expect(afterClaim.user == "alice")
        #expect(afterClaim.revocation == nil)
        // The device's trail holds the membership bought on it, claimed since.
        #expect(try store.historyPage(of: .device("phone"), limit: 10).entries.count == 4)
        #expect(try store.historyPage(of: .user("alice"), limit: 2).entries.map(\.actionName) == ["revoke", "renewal"])
    }

    @Test func aGrantWithAnActorOrReasonKeepsThemInItsEntry() throws {
        let store = makeStore(clock: clock)
        _ = try store.grant(Grant(subject: .user("alice"), productId: "prod_pro"), by: ChangeAuthor(actor: "admin", reason: "goodwill"))
        let entry = try #require(try store.historyPage(of: .user("alice"), limit: 10).entries.first)
        #expect(entry.actionName == "grant")
        #expect(entry.context.actor == "admin")
        #expect(entry.context.reason == "goodwill")
        #expect(entry.sequence == 1)
    }

    @Test func anEntitlementsTrailListsItsDefinitions() throws {
        let store = makeStore(clock: clock)
        try store.define(entitlement: "pro", products: ["prod_b", "prod_a"])
        clock.advance(by: .seconds(1))
        try store.define(entitlement: "other", products: [])
        try store.define(entitlement: "pro", products: ["prod_c"], by: ChangeAuthor(reason: "new plan"))
        let trail = store.historyPage(ofEntitlement: "pro", limit: 10).entries
        #expect(trail.map(\.change) == [
            .catalog(entitlement: "pro", products: ["prod_c"]), .catalog(entitlement: "pro", products: ["prod_a", "prod_b"]),
        ])
        #expect(trail.first?.context.reason == "new plan")
    }

    @Test func aCheckOfThePastDoesNotSeeAClaimThatCameLater() throws {
        let store = makeStore(clock: clock)
        store.buy("prod_pro", as: .device("phone"))
        clock.advance(by: .hours(1))
        _ = try store.claim(device: "phone", user: "alice")
        clock.advance(by: .hours(1))

        let beforeClaim = referenceTime.adding(.minutes(30))
        #expect(try store.access(.device("phone"), at: beforeClaim) == .active(until: nil))
        #expect(try store.access(.user("alice"), at: beforeClaim) == .inactive)
        #expect(try store.access(.device("phone")) == .inactive)
        #expect(try store.access(.user("alice")) == .active(until: nil))
        #expect(try store.membershipsPage(visibleTo: .device("phone"), asOf: beforeClaim, limit: 1000).memberships.count == 1)
        #expect(try store.membershipsPage(visibleTo: .device("phone"), asOf: clock.now, limit: 1000).memberships.isEmpty)
    }

    @Test func aCheckOfThePastSeesAnEventFromItsEventTimeOn() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_pro", as: .user("alice"), expiry: .after(.days(30)))
        clock.advance(by: .days(10))
        // The store reports, on day 10, a refund that happened on day 5.
        _ = try store.apply(LifecycleEvent(id: "evt_r", time: referenceTime.adding(.days(5)), kind: .refund), to: membership.id)

        #expect(try store.hasAccess(.user("alice"), at: referenceTime.adding(.days(4))))
        #expect(try !store.hasAccess(.user("alice"), at: referenceTime.adding(.days(6))))
        #expect(try !store.hasAccess(.user("alice")))
    }

    @Test func aCheckOfThePastUsesTheExpiryAMembershipHadThen() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_pro", as: .user("alice"), expiry: .after(.days(30)))
        clock.advance(by: .days(40))
        _ = try store.apply(
            LifecycleEvent(id: "evt_1", time: clock.now, kind: .renewal(expiresAt: referenceTime.adding(.days(70)))), to: membership.id
        )
        clock.advance(by: .days(1))
        // Between the old expiry and the renewal it had lapsed; after the renewal it is active again.
        #expect(try store.access(.user("alice"), at: referenceTime.adding(.days(35))) == .inactive)
        #expect(try store.access(.user("alice"), at: referenceTime.adding(.days(20))) == .active(until: referenceTime.adding(.days(30))))
        #expect(try store.access(.user("alice"), at: referenceTime.adding(.days(40))) == .active(until: referenceTime.adding(.days(70))))
    }

    @Test func aCheckOfThePastFiltersByProductAndEntitlement() throws {
        let store = makeStore(clock: clock)
        try store.define(entitlement: "pro", products: ["prod_pro"])
        store.buy("prod_pro", as: .user("alice"), expiry: .after(.days(30)))
        clock.advance(by: .days(1))
        let moment = referenceTime.adding(.hours(1))
        #expect(try store.hasAccess(.user("alice"), product: "prod_pro", at: moment))
        #expect(try !store.hasAccess(.user("alice"), product: "prod_other", at: moment))
        #expect(try store.check(AccessQuery(subject: .user("alice"), filter: .entitlement("pro"), moment: moment)).isActive)
        #expect(throws: StoreError.unknownEntitlement("nope")) {
            try store.check(AccessQuery(subject: .user("alice"), filter: .entitlement("nope"), moment: moment))
        }
    }

    @Test func aRestoredImageKeepsTheTrailTheKeysAndThePast() throws {
        let store = makeStore(clock: clock)
        let membership = try store.grant(Grant(subject: .device("phone"), productId: "prod_pro", idempotencyKey: "k1")).value
        clock.advance(by: .hours(1))
        _ = try store.claim(device: "phone", user: "alice")
        try store.define(entitlement: "pro", products: ["prod_pro"])
        clock.advance(by: .hours(1))

        let restored = EntitlementStore(restoring: store.image(), clock: { clock.now })
        #expect(try restored.historyPage(of: .user("alice"), limit: 10).entries == (try store.historyPage(of: .user("alice"), limit: 10).entries))
        #expect(restored.historyPage(ofEntitlement: "pro", limit: 10).entries.count == 1)
        #expect(try restored.hasAccess(.device("phone"), at: referenceTime.adding(.minutes(30))))
        #expect(try restored.grant(Grant(subject: .device("phone"), productId: "prod_pro", idempotencyKey: "k1")).value.id == membership.id)
    }

    @Test func revisionsDoNotRepeatTheTransactionsSoRenewalsCostLinearMemory() throws {
        let store = makeStore(clock: clock)
        let membership = try store.grant(
            Grant(subject: .user("alice"), productId: "prod_pro", expiry: .after(.days(30)), transaction: Grant.Transaction(id: "tx_0"))
        ).value
        for month in 1...12 {
            clock.advance(by: .days(30))
            let renewal = LifecycleEvent(
                id: "evt_\(month)", time: clock.now, kind: .renewal(expiresAt: clock.now.adding(.days(30))), transactionId: "tx_\(month)"
            )
            _ = try store.apply(renewal, to: membership.id)
        }
        let image = store.image()
        let revisions = try #require(image.revisions.values.first)
        #expect(revisions.count == 12)
        #expect(revisions.allSatisfy { $0.before?.lifecycle.transactions.isEmpty == true })
        #expect(revisions.allSatisfy { $0.before?.lifecycle.appliedEventIDs.isEmpty == true })
        // The membership itself keeps them all; the past keeps what checks need (its expiry then).
        #expect(store.membership(withID: membership.id)?.lifecycle.transactions.count == 13)
        #expect(try store.access(.user("alice"), at: referenceTime.adding(.days(45))) == .active(until: referenceTime.adding(.days(60))))
        guard case .membership(_, let newest) = try #require(try store.historyPage(of: .user("alice"), limit: 1).entries.first).change else { return }
        #expect(newest.lifecycle.transactions.count == 13)
    }
}

@Suite struct ShardedDictionaryTests {
    @Test func itCountsStoresRemovesAndListsLikeADictionary() {
        var sharded = ShardedDictionary<String, Int>()
        var plain: [String: Int] = [:]
        for index in 0..<500 {
            sharded["k\(index % 300)"] = index
            plain["k\(index % 300)"] = index
        }
        for index in stride(from: 0, to: 300, by: 7) {
            sharded["k\(index)"] = nil
            plain["k\(index)"] = nil
        }
        sharded["absent"] = nil
        sharded.modify("new", default: 0) { $0 += 5 }
        plain["new", default: 0] += 5
        sharded.modify("k1", default: 0) { $0 += 1 }
        plain["k1", default: 0] += 1
        #expect(sharded.count == plain.count)
        #expect(Dictionary(uniqueKeysWithValues: sharded.map { ($0.key, $0.value) }) == plain)
        #expect(sharded.values.sorted() == plain.values.sorted())
        #expect(sharded["k1"] == plain["k1"])
    }

    @Test func removeAllRemovesTheMatchingEntriesAndKeepsACopyAsItWas() {
        var sharded = ShardedDictionary<String, Int>()
        for index in 0..<1_000 { sharded["k\(index)"] = index }
        let copy = sharded  // as a snapshot holds it
        sharded.removeAll { key, value in value % 10 == 3 || key == "k4" }
        #expect(sharded.count == 899)
        #expect(sharded["k3"] == nil && sharded["k4"] == nil && sharded["k13"] == nil)
        #expect(sharded["k5"] == 5)
        #expect(Set(sharded.map(\.value)) == Set((0..<1_000).filter { $0 % 10 != 3 && $0 != 4 }))
        #expect(copy.count == 1_000)
        #expect(copy["k3"] == 3)
        sharded.removeAll { _, _ in false }
        #expect(sharded.count == 899)
    }
}
