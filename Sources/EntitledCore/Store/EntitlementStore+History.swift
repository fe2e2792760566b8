extension EntitlementStore {
    /// Every membership `subject` can see now or could see at some moment (see `historyPage(of:after:limit:)`), as
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
