extension StoreImage {
    /// This image without the slots of erased memberships, every position (idempotency keys, revisions)
    /// renumbered to match: what a snapshot writes, so that it holds nothing of an erased person and
    /// loading it gives a state without holes. Returns the image itself when nothing was erased.
    ///
    /// Runs on the snapshot's thread, not under the store's lock; it copies the tables only when there
    /// is something to leave out.
    public func withoutErasedMemberships() -> StoreImage {
        guard erasedMembershipCount > 0 else { return self }
        var kept = MembershipTable()
        // The new position of each old one; `UInt32.max` for an erased slot.
        var position = [UInt32](repeating: .max, count: memberships.count)
        for (slot, membership) in memberships.enumerated() where !membership.isErased {
            position[slot] = UInt32(kept.append(membership))
        }
        var keys = ShardedDictionary<String, UInt32>()
        for (key, slot) in idempotencyKeys where position[Int(slot)] != .max {
            keys[key] = position[Int(slot)]
        }
        var keptRevisions = ShardedDictionary<UInt32, [MembershipRevision]>()
        for (slot, slotRevisions) in revisions where position[Int(slot)] != .max {
            keptRevisions[position[Int(slot)]] = slotRevisions
        }
        // The feed's entries of erased memberships go too: only their erasures' items name them.
        let erasedIDs = feed.erasedIDs
        return StoreImage(
            sequence: sequence, memberships: kept, catalog: catalog, idempotencyKeys: keys, revisions: keptRevisions,
            catalogRevisions: catalogRevisions, erasures: erasures, feed: feed.withoutEntries(of: erasedIDs)
        )
    }
}
