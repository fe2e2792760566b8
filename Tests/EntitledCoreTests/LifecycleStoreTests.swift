import Testing

@testable import EntitledCore

/// Lifecycle events, purchase-time lifecycle fields and idempotent grants, through the store.
@Suite struct LifecycleStoreTests {
    let clock = TestClock(referenceTime)

    func event(_ id: String, daysAfterStart days: Int64, _ kind: LifecycleEvent.Kind, transaction: String? = nil) -> LifecycleEvent {
        LifecycleEvent(id: id, time: referenceTime.adding(.days(days)), kind: kind, transactionId: transaction)
    }

    @Test func aRenewalEventExtendsAccessAndCountsTheRenewalAndAChecksSeesIt() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_pro", as: .user("alice"), expiry: .after(.days(30)))
        clock.advance(by: .days(30))
        #expect(try store.access(.user("alice")) == .inactive)

        let renewed = try store.apply(event("evt_1", daysAfterStart: 30, .renewal(expiresAt: referenceTime.adding(.days(60)))), to: membership.id)
        #expect(renewed.value.outcome == .applied)
        #expect(renewed.value.membership.lifecycle.renewsCount == 1)
        #expect(try store.access(.user("alice")) == .active(until: referenceTime.adding(.days(60))))
        #expect(store.membership(withID: membership.id) == renewed.value.membership)
    }

    @Test func aRedeliveredEventIsIgnoredAsADuplicateAndRecordsNothing() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_pro", as: .user("alice"), expiry: .after(.days(30)))
        clock.advance(by: .days(1))
        let cancel = event("evt_1", daysAfterStart: 1, .cancellation)
        let first = try store.apply(cancel, to: membership.id)
        let again = try store.apply(cancel, to: membership.id)
        #expect(first.value.outcome == .applied)
        #expect(again.value.outcome == .ignored(.duplicate))
        #expect(again.sequence == first.sequence)
        #expect(again.value.membership == first.value.membership)
    }

    @Test func anEventOlderThanTheNewestAppliedIsIgnoredAsOutOfOrder() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_pro", as: .user("alice"), expiry: .after(.days(30)))
        clock.advance(by: .days(5))
        _ = try store.apply(event("evt_new", daysAfterStart: 5, .uncancellation), to: membership.id)
        let stale = try store.apply(event("evt_old", daysAfterStart: 2, .cancellation), to: membership.id)
        #expect(stale.value.outcome == .ignored(.outOfOrder))
        #expect(stale.value.membership.lifecycle.willRenew)
    }

    @Test func anEventForAnUnknownMembershipIsNotFound() {
        let store = makeStore(clock: clock)
        let id = MembershipID(rawValue: "mem_0000000000000")
        #expect(throws: StoreError.unknownMembership(id)) { try store.apply(event("e", daysAfterStart: 0, .pause), to: id) }
    }

    @Test func aBillingIssueKeepsAccessThroughTheGracePeriodAsPastDue() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_pro", as: .user("alice"), expiry: .after(.days(30)))
        let grace = referenceTime.adding(.days(36))
        clock.set(referenceTime.adding(.days(30)))
        _ = try store.apply(event("evt_1", daysAfterStart: 30, .billingIssue(gracePeriodExpiresAt: grace)), to: membership.id)
        clock.set(referenceTime.adding(.days(33)))
        #expect(try store.access(.user("alice")) == .active(until: grace))
        #expect(store.membership(withID: membership.id)?.status(at: clock.now) == .pastDue)
        clock.set(grace)
        #expect(try store.access(.user("alice")) == .inactive)
    }

    @Test func aRefundEventRevokesAndMarksTheTransactionRefunded() throws {
        let store = makeStore(clock: clock)
        let grant = Grant(
            subject: .user("alice"), productId: "prod_pro", expiry: .after(.days(30)),
            transaction: Grant.Transaction(id: "tx_1")
        )
        let membership = try store.grant(grant).value
        clock.advance(by: .days(3))
        let refunded = try store.apply(event("evt_r", daysAfterStart: 3, .refund), to: membership.id).value.membership
        #expect(refunded.revocation == Revocation(revokedAt: referenceTime.adding(.days(3)), reason: "refund"))
        #expect(refunded.lifecycle.transactions.first?.revokedAt == referenceTime.adding(.days(3)))
        #expect(try store.access(.user("alice")) == .inactive)
    }

    @Test func aRefundReversalGivesAccessBackAndUnmarksTheTransactionAndThePastStaysRevoked() throws {
        let store = makeStore(clock: clock)
        let grant = Grant(
            subject: .user("alice"), productId: "prod_pro", expiry: .after(.days(30)),
            transaction: Grant.Transaction(id: "tx_1")
        )
        let membership = try store.grant(grant).value
        clock.advance(by: .days(3))
        _ = try store.apply(event("evt_r", daysAfterStart: 3, .refund), to: membership.id)
        clock.advance(by: .days(2))
        let reversed = try store.apply(event("evt_rr", daysAfterStart: 5, .refundReversal), to: membership.id).value.membership
        #expect(reversed.revocation == nil)
        #expect(reversed.lifecycle.transactions.first?.revokedAt == nil)
        #expect(try store.access(.user("alice")) == .active(until: referenceTime.adding(.days(30))))
        // Between the refund and its reversal, access was revoked.
        #expect(try store.access(.user("alice"), at: referenceTime.adding(.days(4))) == .inactive)
    }

    @Test func aGrantKeepsItsPurchaseTimeLifecycleFieldsAndTransaction() throws {
        let store = makeStore(clock: clock)
        let terms = PurchaseTerms(willRenew: true, periodType: .trial, environment: .sandbox, ownership: .familyShared, grantType: .familySharing)
        let grant = Grant(
            subject: .user("alice"), productId: "prod_pro", expiry: .after(.days(7)), terms: terms,
            transaction: Grant.Transaction(id: "tx_2", originalTransactionId: "tx_1")
        )
        let membership = try store.grant(grant).value
        #expect(membership.lifecycle.willRenew)
        #expect(membership.lifecycle.periodType == .trial)
        #expect(membership.lifecycle.environment == .sandbox)
        #expect(membership.lifecycle.ownership == .familyShared)
        #expect(membership.lifecycle.grantType == .familySharing)
        #expect(membership.lifecycle.renewsCount == 0)
        #expect(membership.lifecycle.transactions == [
            PurchaseTransaction(
                id: "tx_2", originalTransactionId: "tx_1", type: "trial_started", time: referenceTime,
                expiresAt: referenceTime.adding(.days(7))
            )
        ])
        #expect(membership.status(at: referenceTime) == .trialing)
    }

    @Test func aRetriedGrantWithTheSameIdempotencyKeyReturnsTheFirstMembershipAndCreatesNothing() throws {
        let store = makeStore(clock: clock)
        let grant = Grant(subject: .device("phone"), productId: "prod_pro", idempotencyKey: "order-17")
        let first = try store.grant(grant)
        clock.advance(by: .seconds(5))
        _ = try store.claim(device: "phone", user: "alice")
        let retried = try store.grant(grant)
        #expect(!first.isReplay)
        #expect(retried.isReplay)
        #expect(retried.value.id == first.value.id)
        #expect(retried.value.user == "alice")  // as it is now, claimed since
        #expect(store.membershipCount == 1)
    }

    @Test func anIdempotencyKeyReusedForAnotherGrantIsAConflict() throws {
        let store = makeStore(clock: clock)
        let first = try store.grant(Grant(subject: .user("alice"), productId: "prod_pro", idempotencyKey: "order-17")).value
        #expect(throws: StoreError.idempotencyKeyReused(key: "order-17", membership: first.id)) {
            try store.grant(Grant(subject: .user("bob"), productId: "prod_pro", idempotencyKey: "order-17"))
        }
        #expect(StoreError.idempotencyKeyReused(key: "k", membership: first.id).code == .conflict)
        #expect(store.membershipCount == 1)
    }

    @Test func theCustomerViewNamesEachEntitlementByItsLongestActiveMembership() throws {
        let store = makeStore(clock: clock)
        try store.define(entitlement: "pro", products: ["prod_month", "prod_year"])
        try store.define(entitlement: "extra", products: ["prod_extra"])
        store.buy("prod_month", as: .user("alice"), expiry: .after(.days(30)))
        let yearly = store.buy("prod_year", as: .user("alice"), expiry: .after(.days(365)))
        let expired = store.buy("prod_extra", as: .user("alice"), expiry: .after(.days(1)))
        let refunded = store.buy("prod_refunded", as: .user("alice"))
        _ = try store.revoke(refunded.id, reason: "refund")
        clock.advance(by: .days(2))

        let info = try store.customerInfo(of: .user("alice"))
        #expect(info.entitlements["pro"]?.membershipId == yearly.id)
        #expect(info.entitlements["pro"]?.isActive == true)
        #expect(info.entitlements["pro"]?.expiresAt == referenceTime.adding(.days(365)))
        #expect(info.entitlements["extra"]?.membershipId == expired.id)
        #expect(info.entitlements["extra"]?.isActive == false)
        #expect(info.activeProducts == ["prod_month", "prod_year"])
        #expect(info.allPurchasedProductIds == ["prod_extra", "prod_month", "prod_year"])
        #expect(info.latestExpirationDate == referenceTime.adding(.days(365)))
        #expect(info.firstSeen == referenceTime)
        #expect(info.requestDate == referenceTime.adding(.days(2)))
        #expect(try store.customerInfo(of: .user("nobody")).firstSeen == nil)
    }

    @Test func anEventDatedFurtherAheadThanTheAllowedClockSkewIsRefusedAndChangesNothing() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_pro", as: .user("alice"), expiry: .after(.days(30)))
        let future = LifecycleEvent(id: "evt_f", time: referenceTime.adding(.hours(2)), kind: .cancellation)
        #expect(throws: StoreError.eventFromTheFuture(eventTime: future.time, now: referenceTime)) {
            try store.apply(future, to: membership.id)
        }
        #expect(StoreError.eventFromTheFuture(eventTime: future.time, now: referenceTime).code == .invalid)
        // Within the allowance: applied, and a later real event is still in order.
        let skewed = LifecycleEvent(id: "evt_s", time: referenceTime.adding(.minutes(30)), kind: .cancellation)
        #expect(try store.apply(skewed, to: membership.id).value.outcome == .applied)
        #expect(store.membership(withID: membership.id)?.lifecycle.appliedEventIDs == ["evt_s"])
    }

    @Test func aRetriedGrantIsStillRecognisedAfterAProductChange() throws {
        let store = makeStore(clock: clock)
        let grant = Grant(subject: .user("alice"), productId: "prod_month", idempotencyKey: "order-3")
        let first = try store.grant(grant).value
        _ = try store.apply(LifecycleEvent(id: "e", time: referenceTime, kind: .productChange(productId: "prod_year")), to: first.id)
        let retried = try store.grant(grant)
        #expect(retried.isReplay)
        #expect(retried.value.productId == "prod_year")
    }

    @Test func aRepeatedRevokeIsReportedAsAReplay() throws {
        let store = makeStore(clock: clock)
        let membership = store.buy("prod_pro", as: .user("alice"))
        #expect(try !store.revoke(membership.id, reason: nil).isReplay)
        #expect(try store.revoke(membership.id, reason: nil).isReplay)
    }
}
