import Synchronization

extension EntitlementStore {
    /// Replaces everything this store holds with what `other` holds, at once for every reader: the durable
    /// store puts memory back to what its log holds this way after the log failed, so that no change its
    /// writer was told failed stays visible. `other` is read, not changed; drop it afterwards (until then
    /// the two share their tables, copy-on-write).
    public func restore(from other: EntitlementStore) {
        let (restored, sequence) = other.lock.withReadLock { (other.state, other.lastSequence) }
        lock.withWriteLock {
            state = restored
            lastSequence = sequence
            nextAccessEndHint.store(state.accessEnds.nextDue ?? .max, ordering: .relaxed)
        }
    }

    /// Passes over the numbers after the newest change up to `sequence`, which name no change: the next
    /// change is numbered `sequence + 1`. A cluster's database whose history was cut short by a failover
    /// resumes its numbering beyond every number its nodes may have given, so that no number ever names two
    /// different changes (Protocol/CLUSTER.md, "After a failover").
    /// - Throws: `StoreError.inconsistentReplay` when `sequence` is not after the newest change.
    public func skipNumbers(through sequence: UInt64) throws(StoreError) {
        try lock.withWriteLock { () throws(StoreError) in
            guard sequence > lastSequence else {
                throw .inconsistentReplay("the numbering cannot resume at change \(sequence + 1): change \(lastSequence) was applied")
            }
            state.feed.noteSkipped((lastSequence + 1)...sequence)
            lastSequence = sequence
        }
    }

    /// When the newest change recorded in the store was made (`nil` before any): no reader's "now" should
    /// come before it, or it would see the present as a past moment.
    public var newestChangeTime: Timestamp? {
        let milliseconds = lock.withReadLock { state.newestChangeTime }
        return milliseconds == .min ? nil : Timestamp(millisecondsSinceEpoch: milliseconds)
    }
}
