import Testing

@testable import EntitledCore

/// Lifecycle events applied to one membership: what each does to its status and access, and which
/// events are ignored.
@Suite struct LifecycleEventTests {
    private let start = referenceTime

    /// A monthly subscription bought at `start`, renewing.
    private func subscription(_ lifecycle: MembershipLifecycle = MembershipLifecycle(willRenew: true)) -> Membership {
        Membership(
            id: MembershipID(bits: 42), productId: "pro_monthly", user: "u1", createdAt: start,
            expiresAt: start.adding(.days(30)), source: .appStore, lifecycle: lifecycle
        )
    }

    private func event(_ id: String, after days: Int64, _ kind: LifecycleEvent.Kind) -> LifecycleEvent {
        LifecycleEvent(id: id, time: start.adding(.days(days)), kind: kind)
    }

    private func applied(_ membership: Membership, _ event: LifecycleEvent) -> Membership {
        let (changed, outcome) = membership.applying(event)
        #expect(outcome == .applied)
        return changed
    }

    @Test func aTrialIsTrialingAndGrantsAccessUntilItConvertsByARenewal() {
        let trial = subscription(MembershipLifecycle(willRenew: true, periodType: .trial))
        #expect(trial.status(at: start.adding(.days(1))) == .trialing)
        #expect(trial.isActive(at: start.adding(.days(1))))

        let renewed = applied(trial, event("e1", after: 30, .renewal(expiresAt: start.adding(.days(60)))))
        #expect(renewed.lifecycle.periodType == .normal)
        #expect(renewed.lifecycle.renewsCount == 1)
        #expect(renewed.expiresAt == start.adding(.days(60)))
        #expect(renewed.status(at: start.adding(.days(45))) == .active)
        #expect(renewed.status(at: start.adding(.days(60))) == .expired)
    }

    @Test func aCancellationKeepsAccessUntilExpiryAndAnUncancellationUndoesIt() {
        let canceled = applied(subscription(), event("e1", after: 10, .cancellation))
        #expect(canceled.status(at: start.adding(.days(11))) == .canceled)
        #expect(canceled.isActive(at: start.adding(.days(29))))
        #expect(canceled.status(at: start.adding(.days(30))) == .expired)
        #expect(canceled.lifecycle.willRenew == false)
        #expect(canceled.lifecycle.unsubscribeDetectedAt == start.adding(.days(10)))
        #expect(canceled.lifecycle.renewState == .canceled)

        let back = applied(canceled, event("e2", after: 12, .uncancellation))
        #expect(back.status(at: start.adding(.days(13))) == .active)
        #expect(back.lifecycle.unsubscribeDetectedAt == nil)
        #expect(back.lifecycle.renewState == .willRenew)
    }

    @Test func aBillingIssueIsPastDueAndKeepsAccessThroughItsGracePeriodOnly() {
        let graceEnd = start.adding(.days(36))
        let failing = applied(subscription(), event("e1", after: 30, .billingIssue(gracePeriodExpiresAt: graceEnd)))
        #expect(failing.lifecycle.renewState == .billingIssue)
        #expect(failing.status(at: start.adding(.days(31))) == .pastDue)
        #expect(failing.isActive(at: start.adding(.days(35))))
        #expect(failing.status(at: graceEnd) == .expired)
        #expect(failing.accessEnd == graceEnd)

        let recovered = applied(failing, event("e2", after: 32, .billingRecovered))
        #expect(recovered.lifecycle.billingIssueDetectedAt == nil)
        #expect(recovered.accessEnd == start.adding(.days(30)))

        let withoutGrace = applied(subscription(), event("e3", after: 29, .billingIssue(gracePeriodExpiresAt: nil)))
        #expect(withoutGrace.status(at: start.adding(.days(29))) == .pastDue)
        #expect(withoutGrace.status(at: start.adding(.days(30))) == .expired)
    }

    @Test func anExpirationEndsAccessAtItsTimeButNeverGivesBackDaysAlreadyEnded() {
        let ended = applied(subscription(), event("e1", after: 5, .expiration))
        #expect(ended.expiresAt == start.adding(.days(5)))
        #expect(ended.status(at: start.adding(.days(6))) == .expired)
        #expect(ended.lifecycle.willRenew == false)

        let late = applied(subscription(), event("e2", after: 40, .expiration))
        #expect(late.expiresAt == start.adding(.days(30)))
    }

    @Test func aPauseStopsAccessFromItsTimeAndAResumeRestoresIt() {
        let paused = applied(subscription(), event("e1", after: 10, .pause))
        #expect(paused.status(at: start.adding(.days(9))) == .active)
        #expect(paused.status(at: start.adding(.days(10))) == .paused)
        #expect(!paused.isActive(at: start.adding(.days(11))))
        #expect(paused.accessStops == start.adding(.days(10)))

        let resumed = applied(paused, event("e2", after: 20, .resume(expiresAt: start.adding(.days(40)))))
        #expect(resumed.status(at: start.adding(.days(21))) == .active)
        #expect(resumed.accessStops == start.adding(.days(40)))
    }

    @Test func aProductChangeMovesTheMembershipToTheNewProduct() {
        let moved = applied(subscription(), event("e1", after: 3, .productChange(productId: "pro_yearly")))
        #expect(moved.productId == "pro_yearly")
        #expect(moved.id == subscription().id)
    }

    @Test func aRefundRevokesForGoodAndLaterEventsAreIgnored() {
        let refunded = applied(subscription(), event("e1", after: 3, .refund))
        #expect(refunded.revocation == Revocation(revokedAt: start.adding(.days(3)), reason: "refund"))
        #expect(refunded.status(at: start.adding(.days(4))) == .revoked)

        let (after, outcome) = refunded.applying(event("e2", after: 4, .renewal(expiresAt: start.adding(.days(90)))))
        #expect(outcome == .ignored(.revoked))
        #expect(after == refunded)
    }

    @Test func aRefundReversalUndoesARefundButNoOtherRevocation() {
        let refunded = applied(subscription(), event("e1", after: 3, .refund))
        let reversed = applied(refunded, event("e2", after: 5, .refundReversal))
        #expect(reversed.revocation == nil)
        #expect(reversed.expiresAt == subscription().expiresAt)
        #expect(reversed.status(at: start.adding(.days(6))) == .active)
        // A revocation for another reason stays: the reversal is ignored.
        var chargedBack = subscription()
        chargedBack.revocation = Revocation(revokedAt: start.adding(.days(3)), reason: "chargeback")
        let (after, outcome) = chargedBack.applying(event("e3", after: 5, .refundReversal))
        #expect(outcome == .ignored(.revoked))
        #expect(after == chargedBack)
        // Not revoked: applied, nothing to give back.
        #expect(applied(subscription(), event("e4", after: 5, .refundReversal)).revocation == nil)
        // An operator's revoke with the reason "refund" is no refund event's: it stays.
        var revokedByHand = subscription()
        revokedByHand.revocation = Revocation(revokedAt: start.adding(.days(3)), reason: "refund")
        #expect(revokedByHand.applying(event("e5", after: 5, .refundReversal)).outcome == .ignored(.revoked))
    }

    @Test func reversingASecondRefundWhileTheFirstStandsGivesNothingBack() {
        var renewed = applied(subscription(), LifecycleEvent(id: "r1", time: start.adding(.days(1)), kind: .renewal(expiresAt: start.adding(.days(60))), transactionId: "T1"))
        renewed = applied(renewed, LifecycleEvent(id: "r2", time: start.adding(.days(2)), kind: .renewal(expiresAt: start.adding(.days(90))), transactionId: "T2"))
        let refunded = applied(renewed, LifecycleEvent(id: "f1", time: start.adding(.days(3)), kind: .refund, transactionId: "T1"))
        // T2's refund comes while T1's stands: ignored (revoked), T2 stays unmarked.
        let (stillRefunded, second) = refunded.applying(LifecycleEvent(id: "f2", time: start.adding(.days(4)), kind: .refund, transactionId: "T2"))
        #expect(second == .ignored(.revoked))
        // Reversing T2's refund gives nothing back; reversing T1's does.
        let (same, outcome) = stillRefunded.applying(LifecycleEvent(id: "v2", time: start.adding(.days(5)), kind: .refundReversal, transactionId: "T2"))
        #expect(outcome == .ignored(.revoked))
        #expect(same.revocation != nil)
        let reversed = applied(stillRefunded, LifecycleEvent(id: "v1", time: start.adding(.days(6)), kind: .refundReversal, transactionId: "T1"))
        #expect(reversed.revocation == nil)
    }

    @Test func anExtensionMovesExpiryButNeverShortensLifetimeAccess() {
        let extended = applied(subscription(), event("e1", after: 3, .extension(expiresAt: start.adding(.days(37)))))
        #expect(extended.expiresAt == start.adding(.days(37)))

        let lifetime = Membership(id: MembershipID(bits: 7), productId: "lifetime", user: "u1", createdAt: start)
        let stillLifetime = applied(lifetime, event("e2", after: 3, .extension(expiresAt: start.adding(.days(37)))))
        #expect(stillLifetime.expiresAt == nil)
        #expect(stillLifetime.isActive(at: start.adding(.days(3650))))
    }

    @Test func aRedeliveredEventIsIgnoredAsADuplicateEvenWhenItIsAlsoOld() {
        let once = applied(subscription(), event("e1", after: 10, .cancellation))
        let later = applied(once, event("e2", after: 12, .uncancellation))

        let (again, outcome) = later.applying(event("e1", after: 10, .cancellation))
        #expect(outcome == .ignored(.duplicate))
        #expect(again == later)
    }

    @Test func anEventOlderThanTheNewestAppliedIsIgnoredAsOutOfOrder() {
        let renewed = applied(subscription(), event("e2", after: 30, .renewal(expiresAt: start.adding(.days(60)))))
        // The cancellation happened before the renewal, which already reflects what followed it.
        let (unchanged, outcome) = renewed.applying(event("e1", after: 20, .cancellation))
        #expect(outcome == .ignored(.outOfOrder))
        #expect(unchanged == renewed)
        #expect(unchanged.status(at: start.adding(.days(31))) == .active)
    }

    @Test func eventsAtTheSameInstantAreAllApplied() {
        let first = applied(subscription(), event("a", after: 10, .billingIssue(gracePeriodExpiresAt: nil)))
        let second = applied(first, event("b", after: 10, .cancellation))
        #expect(second.lifecycle.appliedEventIDs == ["a", "b"])
        #expect(second.status(at: start.adding(.days(11))) == .pastDue)
    }

    @Test func aMembershipWithoutLifecycleKeepsTheStandardLifecycleOutOfLine() {
        let plain = Membership(id: MembershipID(bits: 1), productId: "p", createdAt: start)
        #expect(plain.lifecycleStorage == nil)
        #expect(plain.lifecycle == .standard)
        #expect(plain.lifecycle.renewState == .nonRenewable)
        var changed = plain
        changed.lifecycle.willRenew = true
        #expect(changed.lifecycleStorage != nil)
        changed.lifecycle.willRenew = false
        #expect(changed.lifecycleStorage == nil)
        #expect(changed == plain)
    }

    @Test func onlyStatusesThatGrantAccessAreActive() {
        let granting = MembershipStatus.allCases.filter(\.grantsAccess)
        #expect(granting == [.active, .trialing, .pastDue, .canceled])
    }
}
