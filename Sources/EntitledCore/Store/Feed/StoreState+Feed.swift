/// The change feed: every change in order, read from the feed's index (`ChangeFeed`) and what the store
/// keeps for its audit trail (membership revisions, catalog revisions, erasures).
extension StoreState {
    /// The most feed entries one page looks at, items or entries of erased memberships passed over: a page
    /// costs a bounded amount however many of a stretch were erased.
    static let maximumFeedEntriesPerPage = 20_000

    /// Notes that change `sequence` touched the membership with the id `bits`, for the feed.
    mutating func noteInFeed(_ bits: UInt64?, sequence: UInt64, context: ChangeContext) {
        guard let bits else { return }
        feed.append(sequence: sequence, membership: bits, at: context.recordedAt.millisecondsSinceEpoch, retention: feedRetention)
    }

    /// The changes after `after` up to `newest` (the newest change the reader may see), at most about
    /// `limit` items: whole changes only, so a change with more items than room finishes the page. With
    /// `subject`, only the items of memberships it owns or owned, or bought on its device (as a watch of
    /// it covers them), and the erasures (which name no one); the page still goes on past the changes it
    /// leaves out, so `next` moves on even when it holds no item.
    /// - Throws: `StoreError.feedTruncated` when the feed no longer holds every change after `after`.
    func feedPage(after: UInt64, newest: UInt64, limit: Int, subject: Subject? = nil) throws(StoreError) -> FeedPage {
        let oldestAfter = feed.horizon - 1
        guard after >= oldestAfter else { throw .feedTruncated(after: after, oldestAfter: oldestAfter, retention: feedRetention) }
        if let lost = feed.skippedNumbers(holding: after) { throw .feedLostChanges(after: after, skipped: lost) }
        guard after < newest else { return FeedPage(items: [], next: after, newest: newest, oldestAfter: oldestAfter) }

        var position = feed.position(after: after)
        var catalogIndex = Self.firstIndex(in: catalogRevisions, after: after, sequence: \.sequence)
        var erasureIndex = Self.firstIndex(in: erasures, after: after, sequence: \.sequence)
        var items: [FeedItem] = []
        var lookedAt = 0
        var lastChange: UInt64?
        while true {
            let change = min(
                feed.entry(at: position)?.sequence ?? .max,
                catalogIndex < catalogRevisions.count ? catalogRevisions[catalogIndex].sequence : .max,
                erasureIndex < erasures.count ? erasures[erasureIndex].sequence : .max
            )
            guard change <= newest else {
                return FeedPage(items: items, next: newest, newest: newest, oldestAfter: oldestAfter)
            }
            if let lastChange, items.count >= limit || lookedAt >= Self.maximumFeedEntriesPerPage {
                return FeedPage(items: items, next: lastChange, newest: newest, oldestAfter: oldestAfter)
            }
            while let entry = feed.entry(at: position), entry.sequence == change {
                if let item = feedItem(of: entry), subject.map({ Self.item(item, concerns: $0) }) ?? true { items.append(item) }
                lookedAt += 1
                position = feed.position(following: position)
            }
            if catalogIndex < catalogRevisions.count, catalogRevisions[catalogIndex].sequence == change {
                if subject == nil { items.append(FeedItem(entry: catalogEntry(catalogRevisions[catalogIndex]))) }
                catalogIndex += 1
                lookedAt += 1
            }
            if erasureIndex < erasures.count, erasures[erasureIndex].sequence == change {
                items.append(feedItem(of: erasures[erasureIndex]))
                erasureIndex += 1
                lookedAt += 1
            }
            lastChange = change
        }
    }

    /// Whether a membership item concerns `subject`: the membership, as the change left it, is its user's
    /// or was bought on its device, or the change (a transfer) took it from the subject.
    private static func item(_ item: FeedItem, concerns subject: Subject) -> Bool {
        guard case .membership(_, let membership) = item.entry.change else { return true }
        func matches(user: String?, device: String?) -> Bool {
            (subject.user != nil && subject.user == user) || (subject.device != nil && subject.device == device)
        }
        return matches(user: membership.user, device: membership.device)
            || item.formerOwner.map { matches(user: $0.user, device: $0.device) } == true
    }

    /// What `entry`'s change did to its membership, or `nil` when the membership was erased since.
    private func feedItem(of entry: ChangeFeed.Entry) -> FeedItem? {
        guard let slot = slot(of: MembershipID(bits: entry.membership)) else { return nil }
        let slotRevisions = revisions[UInt32(slot)] ?? []
        guard let index = Self.index(in: slotRevisions, of: entry.sequence) else {
            // A plain grant keeps no revision (`MembershipRevision`): its item is the membership as
            // created, dated as its audit entry is.
            let created = slotRevisions.first?.before ?? memberships[slot]
            let context = ChangeContext(recordedAt: created.createdAt)
            return FeedItem(entry: AuditEntry(sequence: entry.sequence, context: context, change: .membership(.grant, after: created)))
        }
        let revision = slotRevisions[index]
        let after = index + 1 < slotRevisions.count ? slotRevisions[index + 1].before ?? memberships[slot] : memberships[slot]
        var formerOwner: Subject?
        if revision.action == .transfer, let before = revision.before {
            formerOwner = Subject(user: before.user, device: before.user == nil ? before.device : nil)
        }
        return FeedItem(
            entry: AuditEntry(sequence: entry.sequence, context: revision.trailContext, change: .membership(revision.action, after: after)),
            formerOwner: formerOwner
        )
    }

    private func catalogEntry(_ revision: CatalogRevision) -> AuditEntry {
        let change: AuditEntry.Change =
            revision.isRemoval
            ? .catalogRemoval(entitlement: revision.entitlement, products: revision.products)
            : .catalog(entitlement: revision.entitlement, products: revision.products)
        return AuditEntry(sequence: revision.sequence, context: revision.context, change: change)
    }

    private func feedItem(of erasure: ErasureRecord) -> FeedItem {
        let memberships = feed.erasures[erasure.sequence]
        return FeedItem(
            entry: AuditEntry(
                sequence: erasure.sequence, context: erasure.context,
                change: .erasure(memberships: erasure.memberships, historyEntries: erasure.historyEntries)
            ),
            erasedMemberships: memberships?.erased.map(MembershipID.init(bits:)) ?? [],
            detachedMemberships: memberships?.detached.map(MembershipID.init(bits:)) ?? []
        )
    }

    /// The index of the revision of change `sequence` in `revisions` (ordered by change), if any.
    private static func index(in revisions: [MembershipRevision], of sequence: UInt64) -> Int? {
        let index = firstIndex(in: revisions, after: sequence &- 1, sequence: \.sequence)
        return index < revisions.count && revisions[index].sequence == sequence ? index : nil
    }

    /// The first index of `elements` (ordered by `sequence`) whose sequence is after `after`.
    private static func firstIndex<Element>(in elements: [Element], after: UInt64, sequence: (Element) -> UInt64) -> Int {
        var low = 0
        var high = elements.count
        while low < high {
            let middle = (low + high) / 2
            if sequence(elements[middle]) > after { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
