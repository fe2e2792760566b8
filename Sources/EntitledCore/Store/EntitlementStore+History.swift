extension EntitlementStore {
    /// The audit trail of every membership `subject` can see or could see (its user's, and those bought
    /// on its device, claimed since or not), newest first, at most `limit` entries.
    public func history(of subject: Subject, limit: Int) -> [AuditEntry] {
        lock.withReadLock {
            let entries = state.slotsEverVisible(to: subject).flatMap { state.trail(ofSlot: $0) }
            return Self.newestFirst(entries, limit: limit)
        }
    }

    /// The audit trail of `entitlement` in the catalog, newest first, at most `limit` entries.
    public func history(ofEntitlement entitlement: String, limit: Int) -> [AuditEntry] {
        lock.withReadLock { Self.newestFirst(state.catalogTrail(of: entitlement), limit: limit) }
    }

    private static func newestFirst(_ entries: [AuditEntry], limit: Int) -> [AuditEntry] {
        // A plain grant has no sequence; it is its membership's first entry, so 0 sorts it before the
        // membership's later changes recorded in the same millisecond.
        let sorted = entries.enumerated().sorted {
            let left = ($0.element.context.recordedAt, $0.element.sequence ?? 0, $0.offset)
            let right = ($1.element.context.recordedAt, $1.element.sequence ?? 0, $1.offset)
            return left > right
        }
        return sorted.prefix(max(0, limit)).map(\.element)
    }

    /// Every membership `subject` could see at `moment`, as it was then, newest first.
    public func memberships(visibleTo subject: Subject, asOf moment: Timestamp) -> [Membership] {
        lock.withReadLock {
            state.slotsEverVisible(to: subject).reversed().compactMap { slot in
                state.membership(atSlot: slot, asOf: moment).flatMap { StoreState.isVisible($0, to: subject) ? $0 : nil }
            }
        }
    }
}

extension EntitlementStore {
    /// Every membership `subject` can see now or could see at some moment (see `history(of:limit:)`), as
    /// it is now, oldest first.
    public func membershipsEverVisible(to subject: Subject) -> [Membership] {
        lock.withReadLock { state.slotsEverVisible(to: subject).map { state.memberships[$0] } }
    }

    /// Whom the membership `id` was last taken from by a transfer (a user, or for a guest purchase its
    /// device); `nil` if it never was.
    public func formerOwner(of id: MembershipID) -> Subject? {
        lock.withReadLock {
            guard let slot = state.slot(of: id), let revision = state.revisions[UInt32(slot)]?.last(where: { $0.action == .transfer }),
                let before = revision.before
            else { return nil }
            return Subject(user: before.user, device: before.user == nil ? before.device : nil)
        }
    }
}
