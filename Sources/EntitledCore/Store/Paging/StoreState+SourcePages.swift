/// A listing of one source's memberships in creation (slot) order, for a reconciliation with the store
/// that sold them: each page looks at a bounded run of slots, so that a page costs the same in a store
/// of any size, and its cursor is a position (`SourceCursor`), not a membership.
extension StoreState {
    /// The page of `filter`'s memberships after `cursor`: at most `limit`, among at most `budget` slots
    /// looked at. `next` is `nil` only when the page reached the last slot.
    func sourcePage(_ filter: SourceFilter, after cursor: SourceCursor?, limit: Int, budget: Int) throws(StoreError) -> SourcePage {
        let start = try startSlot(after: cursor)
        // At least one slot a page, so that following `next` always ends.
        let end = start + min(max(1, budget), memberships.count - start)
        let found = memberships.slots(from: start, to: end, limit: limit, where: filter.admits)
        let page = found.slots.map { memberships[$0] }
        guard found.stoppedAt < memberships.count else { return SourcePage(memberships: page, next: nil) }
        let last = found.stoppedAt - 1
        // The last membership not erased of this page's slots, or, when all were erased, the anchor the
        // page started after: looking back stops at this page's own first slot.
        var anchor = cursor?.anchor
        for slot in stride(from: last, through: start, by: -1) where !memberships.isErased(atSlot: slot) {
            anchor = memberships[slot].id
            break
        }
        return SourcePage(memberships: page, next: SourceCursor(numbering: slotNumbering, slot: last, anchor: anchor))
    }

    /// The first slot after `cursor`: exactly after its slot when this state numbers slots as the one
    /// that gave it did, else after its anchor's slot here (see `SourceCursor`).
    private func startSlot(after cursor: SourceCursor?) throws(StoreError) -> Int {
        guard let cursor else { return 0 }
        if cursor.numbering == slotNumbering {
            // Slots are only ever added while a numbering lasts: a slot it gave is still here.
            guard cursor.slot < memberships.count else { throw .unknownSourceCursor(cursor.text) }
            return cursor.slot + 1
        }
        guard let anchor = cursor.anchor else { return 0 }
        guard let slot = slot(of: anchor) else { throw .unknownSourceCursor(cursor.text) }
        return slot + 1
    }
}
