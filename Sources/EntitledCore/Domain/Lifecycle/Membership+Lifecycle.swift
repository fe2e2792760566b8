extension Membership {
    /// The membership after `event`, and whether the event was applied.
    ///
    /// Stores redeliver events and deliver them out of order, so an event is ignored, and the membership
    /// returned unchanged, when one with the same id was applied before (`duplicate`), when it happened
    /// before the newest event applied (`outOfOrder`: it describes a state the membership has moved
    /// past), or when the membership is revoked (`revoked`: final, except that a `refundReversal` undoes
    /// a refund's revocation). A duplicate is reported as such even when it is also old, since that is what
    /// the sender needs to know.
    public func applying(_ event: LifecycleEvent) -> (membership: Membership, outcome: EventOutcome) {
        var lifecycle = self.lifecycle
        if lifecycle.appliedEventIDs.contains(event.id) { return (self, .ignored(.duplicate)) }
        if revocation != nil, !reverses(event) { return (self, .ignored(.revoked)) }
        if let newest = lifecycle.newestEventTime, event.time < newest { return (self, .ignored(.outOfOrder)) }

        var changed = self
        switch event.kind {
        case .renewal(let expiresAt):
            // A renewal is a payment: whatever was pending before it (a trial, a billing issue, a
            // cancellation the customer took back at the store) is over.
            changed.expiresAt = expiresAt
            lifecycle.renewsCount += 1
            lifecycle.willRenew = true
            lifecycle.unsubscribeDetectedAt = nil
            lifecycle.billingIssueDetectedAt = nil
            lifecycle.gracePeriodExpiresAt = nil
            lifecycle.pausedAt = nil
            if lifecycle.periodType == .trial { lifecycle.periodType = .normal }
        case .cancellation:
            lifecycle.willRenew = false
            lifecycle.unsubscribeDetectedAt = event.time
        case .uncancellation:
            lifecycle.willRenew = true
            lifecycle.unsubscribeDetectedAt = nil
        case .billingIssue(let gracePeriodExpiresAt):
            lifecycle.billingIssueDetectedAt = event.time
            lifecycle.gracePeriodExpiresAt = gracePeriodExpiresAt
        case .billingRecovered:
            lifecycle.billingIssueDetectedAt = nil
            lifecycle.gracePeriodExpiresAt = nil
        case .expiration:
            // Ends access at the event's time, never later than it already ended: a late report of an
            // expiry must not give back the days in between.
            changed.expiresAt = changed.expiresAt.map { min($0, event.time) } ?? event.time
            lifecycle.willRenew = false
            lifecycle.gracePeriodExpiresAt = nil
        case .pause:
            lifecycle.pausedAt = event.time
        case .resume(let expiresAt):
            lifecycle.pausedAt = nil
            if let expiresAt { changed.expiresAt = expiresAt }
        case .productChange(let productId):
            changed.productId = productId
        case .refund:
            changed.revocation = Revocation(revokedAt: event.time, reason: Revocation.refundReason)
            lifecycle.willRenew = false
        case .refundReversal:
            // Access comes back until the membership's own end, as before the refund; renewal stays off
            // until the store reports it again (a renewal, an uncancellation).
            if changed.revocation?.reason == Revocation.refundReason { changed.revocation = nil }
        case .extension(let expiresAt):
            // Lifetime access needs no extension, and a date would shorten it.
            if changed.expiresAt != nil { changed.expiresAt = expiresAt }
        }
        lifecycle.recordTransaction(of: event, expiresAt: changed.expiresAt)
        lifecycle.newestEventTime = event.time
        lifecycle.appliedEventIDs.append(event.id)
        // Bounded: a subscription renewed monthly for years must not grow without end. An event older
        // than the newest is refused as out of order whether or not its id is still remembered.
        if lifecycle.appliedEventIDs.count > Limits.rememberedEventIDs {
            lifecycle.appliedEventIDs.removeFirst(lifecycle.appliedEventIDs.count - Limits.rememberedEventIDs)
        }
        changed.lifecycle = lifecycle
        return (changed, .applied)
    }
}

extension Membership {
    /// Whether `event` is a refund reversal that undoes this membership's revocation: one a `refund` event
    /// made (not an operator's `revoke`, whatever its reason: the event's time is the revocation's and the
    /// newest the membership applied), and, when the reversal names a transaction, the refund of that very
    /// transaction (a reversal of a second refund, ignored while the first one stood, gives nothing back).
    func reverses(_ event: LifecycleEvent) -> Bool {
        guard event.kind == .refundReversal, let revocation, revocation.reason == Revocation.refundReason,
            lifecycle.newestEventTime == revocation.revokedAt
        else { return false }
        let transactions = lifecycle.transactions
        // The transaction it unmarks (`recordTransaction`): the one named, else the last refunded.
        let reversed = event.transactionId.flatMap { id in transactions.last { $0.id == id } } ?? transactions.last { $0.revokedAt != nil }
        guard let reversed else {
            // A membership without transactions, or none refunded: the refund marked none.
            return !transactions.contains { $0.revokedAt == revocation.revokedAt }
        }
        return reversed.revokedAt == revocation.revokedAt
    }
}

extension MembershipLifecycle {
    /// Adds the transaction a renewal or product change names, marks the one a refund names (else the
    /// newest) refunded, or clears that mark from the one a refund reversal names (else the newest refunded).
    mutating func recordTransaction(of event: LifecycleEvent, expiresAt: Timestamp?) {
        switch event.kind {
        case .renewal, .productChange:
            guard let id = event.transactionId else { return }
            let original = transactions.first?.originalTransactionId ?? id
            transactions.append(
                PurchaseTransaction(id: id, originalTransactionId: original, type: event.kind.name, time: event.time, expiresAt: expiresAt)
            )
        case .refund:
            let index = event.transactionId.flatMap { id in transactions.lastIndex { $0.id == id } } ?? transactions.indices.last
            if let index, transactions[index].revokedAt == nil { transactions[index].revokedAt = event.time }
        case .refundReversal:
            let index = event.transactionId.flatMap { id in transactions.lastIndex { $0.id == id } } ?? transactions.lastIndex { $0.revokedAt != nil }
            if let index { transactions[index].revokedAt = nil }
        default:
            return
        }
    }
}
