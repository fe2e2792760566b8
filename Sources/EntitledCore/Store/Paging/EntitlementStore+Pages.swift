/// Listings a page at a time, newest first. A page's `next` is passed back as `after` for the one after
/// it; pages stay consistent while the store changes: an item is never listed twice, and one that existed
/// when the listing started and still exists is listed once (items added meanwhile are newer and so come
/// before the first page).
extension EntitlementStore {
    /// The memberships `subject` can see, active or not, newest first: at most `limit` after `cursor`.
    /// - Throws: `StoreError.unknownPageCursor` when `cursor` names no membership.
    public func membershipsPage(visibleTo subject: Subject, after cursor: MembershipID? = nil, limit: Int) throws(StoreError) -> MembershipPage {
        try lock.withReadLock { () throws(StoreError) -> MembershipPage in
            try state.page(ofDescending: state.visibleSlots(of: subject), after: cursor, limit: limit)
        }
    }

    /// The memberships `subject` could see at `moment`, as they were then, newest first: at most `limit`
    /// after `cursor`.
    /// - Throws: `StoreError.subjectTooLarge`, for a `moment` before the newest change, for a subject with
    ///   more than `Limits.maximumMembershipsPerSubjectRead` memberships, now or earlier (or more changes
    ///   than `maximumChangesPerSubjectRead`); `unknownPageCursor`.
    public func membershipsPage(
        visibleTo subject: Subject, asOf moment: Timestamp, after cursor: MembershipID? = nil, limit: Int
    ) throws(StoreError) -> MembershipPage {
        try lock.withReadLock { () throws(StoreError) -> MembershipPage in
            // Nothing changed since `moment`: the memberships were then as they are now, as `check` sees it.
            if moment.millisecondsSinceEpoch >= state.newestChangeTime {
                return try state.page(ofDescending: state.visibleSlots(of: subject), after: cursor, limit: limit)
            }
            return try state.page(visibleTo: subject, asOf: moment, after: cursor, limit: limit)
        }
    }

    /// The memberships holding the store transaction `id`, newest first: at most `limit` after `cursor`.
    public func membershipsPage(withTransactionID id: String, after cursor: MembershipID? = nil, limit: Int) throws(StoreError) -> MembershipPage {
        try lock.withReadLock { () throws(StoreError) -> MembershipPage in
            try state.page(ofDescending: state.slots(ofTransaction: id).reversed(), after: cursor, limit: limit)
        }
    }

    /// The memberships of the subscription whose first transaction is `id`, newest first: at most `limit`
    /// after `cursor`.
    public func membershipsPage(
        withOriginalTransactionID id: String, after cursor: MembershipID? = nil, limit: Int
    ) throws(StoreError) -> MembershipPage {
        try lock.withReadLock { () throws(StoreError) -> MembershipPage in
            try state.page(ofDescending: state.slots(ofOriginalTransaction: id).reversed(), after: cursor, limit: limit)
        }
    }

    /// The memberships of `source`, oldest (first created) first, for a reconciliation with the store that
    /// sold them: with `endedAfter`, only those that may still have had access at or after it (see
    /// `SourceFilter`). At most `limit` after `cursor`, among at most `budget` slots looked at: a page may
    /// hold fewer, even none, and still have a `next`, which is `nil` only once the page reached the last
    /// membership. Memberships granted meanwhile come at the end; erased ones are skipped.
    /// - Throws: `StoreError.unknownSourceCursor` when `cursor` came from another node or before a
    ///   restart and the membership it continues after is not in this store.
    public func membershipsPage(
        ofSource source: PurchaseSource, endedAfter: Timestamp? = nil, after cursor: SourceCursor? = nil, limit: Int,
        budget: Int = Limits.maximumSlotsPerSourcePage
    ) throws(StoreError) -> SourcePage {
        let filter = SourceFilter(source: source, endedAfter: endedAfter)
        return try lock.withReadLock { () throws(StoreError) -> SourcePage in
            try state.sourcePage(filter, after: cursor, limit: limit, budget: budget)
        }
    }

    /// The audit trail of every membership `subject` can see or could see (its user's, and those bought
    /// on its device, claimed since or not), newest first: at most `limit` entries after `cursor`.
    /// - Throws: `StoreError.subjectTooLarge` for a subject with more than
    ///   `Limits.maximumMembershipsPerSubjectRead` memberships; `unknownPageCursor`.
    public func historyPage(of subject: Subject, after cursor: HistoryCursor? = nil, limit: Int) throws(StoreError) -> HistoryPage {
        try lock.withReadLock { () throws(StoreError) -> HistoryPage in
            try state.historyPage(of: subject, after: cursor, limit: limit)
        }
    }

    /// The audit trail of `entitlement` in the catalog, newest first: at most `limit` entries after `cursor`.
    public func historyPage(ofEntitlement entitlement: String, after cursor: HistoryCursor? = nil, limit: Int) -> HistoryPage {
        lock.withReadLock { state.catalogHistoryPage(of: entitlement, after: cursor, limit: limit) }
    }

    /// The erasures (which name no one), newest first: at most `limit` after `cursor`.
    public func erasureHistoryPage(after cursor: HistoryCursor? = nil, limit: Int) -> HistoryPage {
        lock.withReadLock { state.erasureHistoryPage(after: cursor, limit: limit) }
    }
}
