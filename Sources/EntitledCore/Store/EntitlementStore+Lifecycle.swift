extension EntitlementStore {
    /// Applies a lifecycle event to the membership `id` and returns the membership after it with the
    /// outcome. An ignored event (a duplicate, out of order, or aimed at a revoked membership) records
    /// nothing and returns the membership as it is.
    /// - Throws: `StoreError.unknownMembership` when no membership has this id;
    ///   `StoreError.eventFromTheFuture` when `event.time` is more than `Limits.maximumEventLead` ahead;
    ///   `StoreError.changesUnavailable` when the journal takes no more changes.
    public func apply(
        _ event: LifecycleEvent, to id: MembershipID, by author: ChangeAuthor = .local
    ) throws(StoreError) -> Recorded<(membership: Membership, outcome: EventOutcome)> {
        try lock.withWriteLock { () throws(StoreError) -> Recorded<(membership: Membership, outcome: EventOutcome)> in
            guard let existing = state.membership(withID: id) else { throw .unknownMembership(id) }
            let now = clock()
            guard event.time <= now.adding(Limits.maximumEventLead) else { throw .eventFromTheFuture(eventTime: event.time, now: now) }
            let (result, outcome) = existing.applying(event)
            guard outcome.isApplied else { return Recorded((existing, outcome), sequence: lastSequence) }
            let context = ChangeContext(actor: author.actor, reason: author.reason, recordedAt: now)
            try commit(.event(event, result: result), context: context)
            return Recorded((result, outcome), sequence: lastSequence)
        }
    }
}

extension EntitlementStore {
    /// The CustomerInfo view of what `subject` sees, at `moment` (now if `nil`).
    public func customerInfo(of subject: Subject, at moment: Timestamp? = nil) -> CustomerInfo {
        let moment = moment ?? now()
        let (memberships, catalog) = lock.withReadLock {
            (state.visibleSlots(of: subject).map { state.memberships[$0] }, state.catalog.map { (entitlement: $0.key, products: $0.value.sorted) })
        }
        return CustomerInfo(memberships: memberships, catalog: catalog, at: moment)
    }

    /// Gives every unclaimed membership bought on `device` to `user`, as `claim(device:user:by:)` does,
    /// and returns them as they are after the claim (empty when nothing moved).
    public func claimMemberships(device: String, user: String, by author: ChangeAuthor = .local) throws(StoreError) -> Recorded<[Membership]> {
        try lock.withWriteLock { () throws(StoreError) -> Recorded<[Membership]> in
            let slots = state.unclaimedSlotsList(device)
            guard !slots.isEmpty else { return Recorded([], sequence: lastSequence) }
            let context = ChangeContext(actor: author.actor, reason: author.reason, recordedAt: clock())
            try commit(.claim(device: device, user: user), context: context)
            return Recorded(slots.map { state.memberships[$0] }, sequence: lastSequence)
        }
    }
}

extension EntitlementStore {
    /// Every membership that grants access now and stops at a known later time, with that time: what a
    /// watch of every subject sets its expiry timers from.
    public func upcomingAccessEnds() -> [(id: MembershipID, at: Timestamp)] {
        let moment = now().millisecondsSinceEpoch
        return lock.withReadLock { state.upcomingAccessEnds(after: moment) }
    }
}
