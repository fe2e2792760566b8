extension ServedConnection {
    /// Looks at the lines a pipelining client sent before the first is answered (`LineFramer.lookAhead`:
    /// each is decoded once, here, and handed on when answered) and starts loading the store entries of
    /// the users their checks name (`EntitlementStore.prefetchingUsers`): their cache misses then overlap
    /// instead of stalling each check in turn. A hint: nothing is decided here.
    func prefetchPipelinedChecks(upTo lines: Int) {
        // One check alone has nothing to overlap with: the store is not even locked for it.
        guard input.lookAhead(upTo: lines) > 1 else { return }
        processor.store.prefetchingUsers { prefetchUser in
            input.forEachUserJustLookedAt { user in
                var user = user
                user.withUTF8 { prefetchUser(UnsafeRawBufferPointer($0)) }
            }
        }
    }
}
