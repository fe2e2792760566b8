extension EntitlementStore {
    /// Runs `body` with a function that starts loading, for each user id it is given (as UTF-8 bytes),
    /// the first entry a check of that user reads: a connection that read several check lines at once
    /// hands all their users to it before answering the first, so that their cache misses overlap
    /// instead of stalling one check after another.
    ///
    /// Only a hint: it changes nothing and answers nothing. Measured with `perf annotate` (50 connections
    /// pipelining 16 checks, 100,000 users, 2 cores): 85% of the user lookup's time was the load of its
    /// entry, which a lookup with the entry already loading does not wait for.
    public func prefetchingUsers(_ body: (_ prefetchUser: (UnsafeRawBufferPointer) -> Void) -> Void) {
        lock.withReadLock {
            body { utf8 in state.prefetchUser(utf8: utf8) }
        }
    }
}
