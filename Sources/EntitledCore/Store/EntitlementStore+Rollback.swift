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
        }
    }
}
