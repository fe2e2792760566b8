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

    /// How many entries the trail of the membership at `slot` has.
    func trailLength(ofSlot slot: Int) -> Int {
        MembershipTrail(revisions: revisions[UInt32(slot)] ?? [], current: memberships[slot]).count
    }

    /// Entry `index` (oldest 0) of the trail of the membership at `slot`, built alone: a page of a long
    /// trail builds only its own entries.
    func auditEntry(ofSlot slot: Int, at index: Int) -> AuditEntry {
        MembershipTrail(revisions: revisions[UInt32(slot)] ?? [], current: memberships[slot]).entry(at: index)
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
        let slots = try slotsEverVisible(to: query.subject, within: Limits.maximumMembershipsPerSubjectRead, for: "check at an earlier moment")
        for slot in slots {
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
