/// The past: memberships as they were at a moment, and audit trails.
extension StoreState {
    /// The slots of every membership `subject` can see now or could see at some moment: what its user
    /// owns or owned before a transfer, and what was bought on its device as a guest purchase, claimed
    /// since or not. Oldest first, without duplicates.
    func slotsEverVisible(to subject: Subject) -> [Int] {
        var slots: [Int] = []
        if let user = subject.user { slots += ownedSlotsByUserList(user) + formerlyOwnedSlotsList(user) }
        if let device = subject.device {
            slots += unclaimedSlotsList(device)
            slots += claimedSlotsList(device)
        }
        return Array(Set(slots)).sorted()
    }

    /// The membership at `slot` as it was at `moment`: `nil` if it did not exist yet.
    func membership(atSlot slot: Int, asOf moment: Timestamp) -> Membership? {
        let current = memberships[slot]
        guard current.createdAt <= moment else { return nil }
        guard let slotRevisions = revisions[UInt32(slot)] else { return current }
        // The first change that took effect after `moment` kept the membership as it was then.
        for revision in slotRevisions where revision.effectiveAt > moment {
            return revision.before
        }
        return current
    }

    /// Whether `membership`, as it was at some moment, was visible to `subject` then.
    static func isVisible(_ membership: Membership, to subject: Subject) -> Bool {
        if let user = subject.user, membership.user == user { return true }
        if let device = subject.device, membership.user == nil, membership.device == device { return true }
        return false
    }

    /// The membership at `slot` as its grant created it, before any later change.
    func membershipAsCreated(atSlot slot: Int) -> Membership {
        for revision in revisions[UInt32(slot)] ?? [] {
            if let before = revision.before { return before }
        }
        return memberships[slot]
    }

    /// The audit trail of the membership at `slot`, oldest first.
    func trail(ofSlot slot: Int) -> [AuditEntry] {
        let current = memberships[slot]
        let slotRevisions = revisions[UInt32(slot)] ?? []
        var entries: [AuditEntry] = []
        if slotRevisions.first?.action != .grant {
            // A plain grant keeps no revision: its entry is the membership as it was created.
            let created = slotRevisions.first?.before ?? current
            entries.append(
                AuditEntry(sequence: nil, context: ChangeContext(recordedAt: created.createdAt), change: .membership(.grant, after: created))
            )
        }
        for (index, revision) in slotRevisions.enumerated() {
            let after = index + 1 < slotRevisions.count ? slotRevisions[index + 1].before ?? current : current
            entries.append(AuditEntry(sequence: revision.sequence, context: revision.context, change: .membership(revision.action, after: after)))
        }
        return entries
    }

    /// The audit trail of `entitlement` in the catalog, oldest first.
    func catalogTrail(of entitlement: String) -> [AuditEntry] {
        catalogRevisions.filter { $0.entitlement == entitlement }.map {
            let change: AuditEntry.Change =
                $0.isRemoval
                ? .catalogRemoval(entitlement: $0.entitlement, products: $0.products)
                : .catalog(entitlement: $0.entitlement, products: $0.products)
            return AuditEntry(sequence: $0.sequence, context: $0.context, change: change)
        }
    }
}

extension StoreState {
    /// Every membership that grants access at `moment` and stops doing so at a known later time, with
    /// that time (`Membership.accessStops`).
    func upcomingAccessEnds(after moment: Int64) -> [(id: MembershipID, at: Timestamp)] {
        var ends: [(id: MembershipID, at: Timestamp)] = []
        for slot in 0..<memberships.count {
            let record = accessRecord(atSlot: slot)
            guard record.isActive(at: moment), record.expiresAt != .max else { continue }
            ends.append((memberships[slot].id, Timestamp(millisecondsSinceEpoch: record.expiresAt)))
        }
        return ends
    }
}

extension StoreState {
    /// A check of a moment before the newest change: the memberships as they were then (not yet created,
    /// not yet claimed, not yet revoked or changed by an event), against today's catalog. Slower than a
    /// check of the present (it reads every membership the subject ever had, and their revisions), and
    /// allocates.
    ///
    /// `mutating` although it changes nothing, for the reason `forEachVisibleAccess` gives.
    mutating func access(_ query: AccessQuery, asOf moment: Timestamp) throws(StoreError) -> AccessResult {
        var entitlementProducts: Set<String>?
        if case .entitlement(let name) = query.filter {
            guard let products = catalog[name] else { throw .unknownEntitlement(name) }
            entitlementProducts = Set(products.sorted)
        }
        var found = false
        var latestExpiry = Int64.min
        for slot in slotsEverVisible(to: query.subject) {
            guard let membership = membership(atSlot: slot, asOf: moment), Self.isVisible(membership, to: query.subject),
                membership.isActive(at: moment)
            else { continue }
            switch query.filter {
            case .anyProduct: break
            case .product(let product): guard membership.productId == product else { continue }
            case .entitlement: guard entitlementProducts?.contains(membership.productId) == true else { continue }
            }
            found = true
            latestExpiry = max(latestExpiry, membership.accessStops?.millisecondsSinceEpoch ?? .max)
        }
        guard found else { return .inactive }
        return .active(until: latestExpiry == .max ? nil : Timestamp(millisecondsSinceEpoch: latestExpiry))
    }
}
