import HeapModule

/// Pages of listings: memberships by subject or transaction, and audit trails. Each page costs what its
/// listing's index costs to walk (about 4 ns a slot) plus what its at most `limit` items cost to build;
/// reads that build every membership of a subject first are bounded by
/// `Limits.maximumMembershipsPerSubjectRead` (`slotsEverVisible(to:within:for:)`).
extension StoreState {
    /// The page of `slots` (newest first: descending) that follows the membership `cursor`: slots below
    /// its slot, at most `limit`, and whether more follow.
    func page(ofDescending slots: [Int], after cursor: MembershipID?, limit: Int) throws(StoreError) -> MembershipPage {
        var start = slots.startIndex
        if let cursor {
            let bound = try self.slot(ofCursor: cursor)
            start = slots.firstIndex { $0 < bound } ?? slots.endIndex
        }
        let end = min(slots.endIndex, start + limit)
        let page = slots[start..<end].map { memberships[$0] }
        return MembershipPage(memberships: page, next: end < slots.endIndex ? page.last?.id : nil)
    }

    /// The memberships `subject` could see at `moment`, as they were then, newest first: the page after
    /// `cursor`. Refused for a subject with more memberships than a read may go through.
    func page(visibleTo subject: Subject, asOf moment: Timestamp, after cursor: MembershipID?, limit: Int) throws(StoreError) -> MembershipPage {
        let slots = try slotsEverVisible(to: subject, within: Limits.maximumMembershipsPerSubjectRead, for: "memberships at an earlier moment")
        let bound = try cursor.map { cursor throws(StoreError) in try slot(ofCursor: cursor) } ?? Int.max
        var page: [Membership] = []
        for slot in slots.reversed() where slot < bound {
            guard let membership = membership(atSlot: slot, asOf: moment), Self.isVisible(membership, to: subject) else { continue }
            if page.count == limit { return MembershipPage(memberships: page, next: page.last?.id) }
            page.append(membership)
        }
        return MembershipPage(memberships: page, next: nil)
    }

    /// `slotsEverVisible(to:)`, for a read that goes through each of them and its recorded changes:
    /// refused with `subjectTooLarge` past `limit` slots or `Limits.maximumChangesPerSubjectRead` changes.
    /// The refusal is decided from the index's counts without listing when it can
    /// (`everVisibleSlotBound`), so that it costs a huge subject nothing.
    func slotsEverVisible(to subject: Subject, within limit: Int, for operation: String) throws(StoreError) -> [Int] {
        let bound = everVisibleSlotBound(of: subject)
        guard bound <= 4 * limit else { throw .subjectTooLarge(subject, operation: operation, size: .moreMembershipsThan(limit)) }
        let slots = slotsEverVisible(to: subject)
        guard slots.count <= limit else { throw .subjectTooLarge(subject, operation: operation, size: .memberships(slots.count)) }
        var changes = 0
        for slot in slots { changes += revisions[UInt32(slot)]?.count ?? 0 }
        guard changes <= Limits.maximumChangesPerSubjectRead else {
            throw .subjectTooLarge(subject, operation: operation, size: .changes(changes, memberships: slots.count))
        }
        return slots
    }

    /// The slot of the membership a page's `after` names.
    func slot(ofCursor cursor: MembershipID) throws(StoreError) -> Int {
        guard let slot = slot(of: cursor) else { throw .unknownPageCursor(cursor.rawValue) }
        return slot
    }
}

extension StoreState {
    /// Where an audit entry stands in a trail's order; newest first is descending. Entries of one change
    /// (a claim moves several memberships) share the time and the number, so the membership's slot and
    /// the entry's place in its membership's trail tell them apart.
    private struct TrailPosition: Comparable {
        var recordedAt: Int64
        var sequence: UInt64
        var slot: Int
        var index: Int

        static func < (left: Self, right: Self) -> Bool {
            (left.recordedAt, left.sequence, left.slot, left.index) < (right.recordedAt, right.sequence, right.slot, right.index)
        }
    }

    /// The audit trail of every membership `subject` can see or could see, newest first: the page after
    /// `cursor`. Refused for a subject with more memberships, or changes, than a read may go through.
    ///
    /// The trail is ordered from the entries' times and numbers alone, read from the revisions without
    /// building a `Membership` for each entry; only the page's entries are built (building every entry
    /// first cost 1.2 µs an entry, 122 ms for a trail of 100,000).
    func historyPage(of subject: Subject, after cursor: HistoryCursor?, limit: Int) throws(StoreError) -> HistoryPage {
        let slots = try slotsEverVisible(to: subject, within: Limits.maximumMembershipsPerSubjectRead, for: "history")
        let bound = try cursor.map { cursor throws(StoreError) -> TrailPosition in
            let slot = try cursor.membership.map { id throws(StoreError) in try self.slot(ofCursor: id) } ?? -1
            return TrailPosition(recordedAt: cursor.recordedAt, sequence: cursor.sequence, slot: slot, index: cursor.index)
        }
        // The newest `limit + 1` positions (one more tells whether a next page exists), kept in a heap
        // whose least is dropped when a newer one comes. A page of 100 of a trail of 100,000 entries
        // (1,000 memberships renewed 99 times, release build, 2 cores): 24 ms sorting them all, 3 ms so.
        var newest = Heap<TrailPosition>()
        for slot in slots {
            let slotRevisions = revisions[UInt32(slot)] ?? []
            var index = 0
            func consider(_ position: TrailPosition) {
                if let bound, !(position < bound) { return }
                if newest.count <= limit {
                    newest.insert(position)
                } else if position > newest.min! {
                    _ = newest.replaceMin(with: position)
                }
            }
            // As `auditEntry(ofSlot:at:)` numbers them: a plain grant keeps no revision, its entry comes first.
            if slotRevisions.first?.action != .grant {
                consider(TrailPosition(recordedAt: memberships.createdAt(atSlot: slot), sequence: 0, slot: slot, index: 0))
                index = 1
            }
            // By index, reading two fields in place: a loop over the elements copied each revision (its
            // `before` membership's strings retained and released), half the time of that page.
            for position in slotRevisions.indices {
                let recordedAt = slotRevisions[position].trailTime.millisecondsSinceEpoch
                consider(TrailPosition(recordedAt: recordedAt, sequence: slotRevisions[position].sequence, slot: slot, index: index))
                index += 1
            }
        }
        let positions = newest.unordered.sorted(by: >)
        let page = positions.prefix(limit)
        let entries = page.map { auditEntry(ofSlot: $0.slot, at: $0.index) }
        guard positions.count > limit, let last = page.last else { return HistoryPage(entries: entries, next: nil) }
        let next = HistoryCursor(recordedAt: last.recordedAt, sequence: last.sequence, membership: memberships[last.slot].id, index: last.index)
        return HistoryPage(entries: entries, next: next)
    }

    /// The audit trail of `entitlement` in the catalog, newest (last recorded) first: the page after
    /// `cursor`, whose index is a place in the catalog's trail (which only grows).
    func catalogHistoryPage(of entitlement: String, after cursor: HistoryCursor?, limit: Int) -> HistoryPage {
        var entries: [AuditEntry] = []
        var position = min(cursor?.index ?? catalogRevisions.count, catalogRevisions.count)
        while position > 0 {
            position -= 1
            let revision = catalogRevisions[position]
            guard revision.entitlement == entitlement else { continue }
            if entries.count == limit {
                return HistoryPage(entries: entries, next: Self.cursor(after: entries[limit - 1], atTrailPosition: position + 1))
            }
            let change: AuditEntry.Change =
                revision.isRemoval
                ? .catalogRemoval(entitlement: revision.entitlement, products: revision.products)
                : .catalog(entitlement: revision.entitlement, products: revision.products)
            entries.append(AuditEntry(sequence: revision.sequence, context: revision.context, change: change))
        }
        return HistoryPage(entries: entries, next: nil)
    }

    /// The erasures, newest (last recorded) first: the page after `cursor`, whose index is a place in
    /// the erasures' trail (which only grows).
    func erasureHistoryPage(after cursor: HistoryCursor?, limit: Int) -> HistoryPage {
        let end = min(cursor?.index ?? erasures.count, erasures.count)
        let start = max(0, end - limit)
        let entries = erasures[start..<end].reversed().map {
            AuditEntry(sequence: $0.sequence, context: $0.context, change: .erasure(memberships: $0.memberships, historyEntries: $0.historyEntries))
        }
        return HistoryPage(entries: entries, next: start > 0 ? Self.cursor(after: entries[entries.count - 1], atTrailPosition: start) : nil)
    }

    /// The cursor of a catalog or erasure entry: the next page starts below `position`, a place in its trail.
    private static func cursor(after entry: AuditEntry, atTrailPosition position: Int) -> HistoryCursor {
        HistoryCursor(recordedAt: entry.context.recordedAt.millisecondsSinceEpoch, sequence: entry.sequence ?? 0, membership: nil, index: position)
    }
}
