/// The change feed (`StoreState+Feed.swift`): every change in order, a page at a time.
extension EntitlementStore {
    /// How far back the feed reaches. Setting it lets go at once of what it no longer keeps.
    public var feedRetention: FeedRetention {
        get { lock.withReadLock { state.feedRetention } }
        set {
            lock.withWriteLock {
                state.feedRetention = newValue
                state.feed.release(beyond: newValue, now: clock().millisecondsSinceEpoch)
            }
        }
    }

    /// The oldest `after` a feed read may give now: the feed holds every change after it.
    public var feedOldestAfter: UInt64 {
        lock.withReadLock { state.feed.horizon - 1 }
    }

    /// How many membership changes the feed's index holds (16 bytes each).
    public var feedEntryCount: Int {
        lock.withReadLock { state.feed.count }
    }

    /// The changes after change `after`, oldest first: at most about `limit` items (whole changes only),
    /// and none after `newest` (the newest change the caller may show: a server shows only durable ones;
    /// `nil` for the newest applied). With `subject`, only what concerns it (`StoreState.feedPage`).
    /// - Throws: `StoreError.feedTruncated` when the feed no longer holds every change after `after`.
    public func changes(after: UInt64, limit: Int, newest: UInt64? = nil, subject: Subject? = nil) throws(StoreError) -> FeedPage {
        try lock.withReadLock { () throws(StoreError) -> FeedPage in
            try state.feedPage(after: after, newest: min(newest ?? lastSequence, lastSequence), limit: max(1, limit), subject: subject)
        }
    }
}
