/// Erasures: the trail's record of them, and what one removed.
extension EntitlementStore {
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
