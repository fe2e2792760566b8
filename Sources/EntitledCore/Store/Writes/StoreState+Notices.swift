/// The one way a change becomes a notice for watchers: from the change itself and the state around it,
/// for a single server's writes, a cluster node's own writes and the changes it replays from the others.
extension StoreState {
    /// What a change's notice needs from the state before the change, which the state after it no longer
    /// tells.
    enum NoticeBasis {
        case none
        /// The memberships a claim moves.
        case claimed([Int])
        /// A transfer's former owner.
        case formerOwner(Subject?)
        /// The memberships an erasure removes.
        case erased([Membership])
    }

    /// Reads what `change` will take away, before it is applied.
    ///
    /// This and `notice` are `mutating` although they change nothing, for the reason
    /// `forEachVisibleAccess` gives: called through the store's state pointer, the non-mutating forms
    /// copied the whole `StoreState` on every write a watcher was told of.
    mutating func noticeBasis(for change: StoreChange, plannedErasure: ErasurePlan?) -> NoticeBasis {
        switch change {
        case .claim(let device, _):
            return .claimed(unclaimedSlotsList(device))
        case .transfer(let id, _):
            guard let existing = membership(withID: id) else { return .none }
            return .formerOwner(Subject(user: existing.user, device: existing.user == nil ? existing.device : nil))
        case .erase:
            return .erased(plannedErasure?.erased.map { memberships[$0] } ?? [])
        case .create, .revoke, .event, .define, .undefine, .extend:
            return .none
        }
    }

    /// The notice of `change`, just applied as number `sequence`; `nil` when it touched no membership
    /// (catalog changes, a claim of nothing, an erasure of nobody).
    mutating func notice(for change: StoreChange, sequence: UInt64, context: ChangeContext, basis: NoticeBasis) -> AccessNotice? {
        let cause: String
        var memberships: [Membership]
        var formerOwner: Subject?
        switch (change, basis) {
        case (.create(let membership, _), _):
            cause = "grant"
            memberships = [membership]
        case (.revoke(let id, _), _):
            cause = "revoke"
            memberships = membership(withID: id).map { [$0] } ?? []
        case (.extend(let id, _), _):
            cause = "extend"
            memberships = membership(withID: id).map { [$0] } ?? []
        case (.event(let event, let result), _):
            cause = event.kind.name
            memberships = [membership(withID: result.id) ?? result]
        case (.claim, .claimed(let slots)):
            cause = "claim"
            memberships = slots.map { self.memberships[$0] }
        case (.transfer(let id, _), .formerOwner(let owner)):
            cause = "transfer"
            memberships = membership(withID: id).map { [$0] } ?? []
            formerOwner = owner
        case (.erase, .erased(let erased)):
            // Watchers of the person are told their access ended: each membership as revoked.
            cause = "erase"
            memberships = erased.map { membership in
                var ended = membership
                if ended.revocation == nil { ended.revocation = Revocation(revokedAt: context.recordedAt, reason: "erased") }
                return ended
            }
        default:
            return nil
        }
        guard !memberships.isEmpty else { return nil }
        return AccessNotice(cause: cause, memberships: memberships, sequence: sequence, formerOwner: formerOwner)
    }
}
