/// The two changes that remove rather than add: an entitlement from the catalog, a person from the store.
extension EntitlementStore {
    /// Removes `entitlement` from the catalog and returns the products it had (sorted). A check of it is
    /// `not_found` from then on; its audit trail keeps the removal.
    /// - Throws: `StoreError.nothingToUndefine` when the catalog does not define it;
    ///   `StoreError.changesUnavailable` when the journal takes no more changes.
    public func undefine(entitlement: String, by author: ChangeAuthor = .local) throws(StoreError) -> Recorded<[String]> {
        try lock.withWriteLock { () throws(StoreError) -> Recorded<[String]> in
            guard let products = state.catalog[entitlement]?.sorted else { throw .nothingToUndefine(entitlement) }
            let context = ChangeContext(actor: author.actor, reason: author.reason, recordedAt: clock())
            try commit(.undefine(entitlement: entitlement), context: context)
            return Recorded(products, sequence: lastSequence)
        }
    }

    /// Erases `subject`'s user and device (GDPR's right to be forgotten): the memberships the user owns
    /// and the device's unclaimed guest memberships, with their audit entries and idempotency keys; other
    /// users' memberships bought on the device lose the device. Every read afterwards answers as for a
    /// subject that never existed. The audit trail keeps an `ErasureRecord`, which names no one.
    ///
    /// Recorded even when there is nothing to erase: that an erasure was asked for is part of the trail.
    /// - Throws: `StoreError.changesUnavailable` when the journal takes no more changes.
    public func erase(_ subject: Subject, by author: ChangeAuthor = .local) throws(StoreError) -> Recorded<Erasure> {
        try lock.withWriteLock { () throws(StoreError) -> Recorded<Erasure> in
            let plan = state.erasurePlan(user: subject.user, device: subject.device)
            let erased = plan.erased.map { state.memberships[$0] }
            let context = ChangeContext(actor: author.actor, reason: author.reason, recordedAt: clock())
            // The plan is made once, here, and applied as made: nothing changes the state in between.
            try commit(.erase(user: subject.user, device: subject.device), context: context, plannedErasure: plan)
            return Recorded(Erasure(memberships: erased, historyEntries: plan.historyEntries), sequence: lastSequence)
        }
    }

    /// The erasures recorded, newest first, at most `limit`.
    public func erasures(limit: Int) -> [ErasureRecord] {
        lock.withReadLock { Array(state.erasures.suffix(max(0, limit)).reversed()) }
    }
}

/// What an erasure removed.
public struct Erasure: Sendable {
    /// The memberships erased whole, as they were just before (for the watchers of the subject, who are
    /// told that their access ended). Nothing else keeps them.
    public var memberships: [Membership]
    /// How many audit entries went with them.
    public var historyEntries: Int
}
