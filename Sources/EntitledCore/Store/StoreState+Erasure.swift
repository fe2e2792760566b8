/// Erasure of a person (GDPR's right to be forgotten): their memberships, device links, idempotency keys
/// and audit entries leave the state, as if the person had never been a customer.
///
/// Slots are positions in append-only tables that checks index by, so an erased membership's slot stays,
/// holding `StoreState.erasedMembership` (no id, product, user or device) with an access record that
/// grants nothing, and no index, id or key leads to it any more. Snapshots leave those slots out
/// (`StoreImage.withoutErasedMemberships()`), so once one has been written no file holds the person.
extension StoreState {
    /// What an erased slot holds: nothing about anyone. `MembershipID(rawValue: "")` is no membership id,
    /// which is how `Membership.isErased` tells.
    static let erasedMembership = Membership(
        id: MembershipID(rawValue: ""), productId: "", createdAt: Timestamp(millisecondsSinceEpoch: 0)
    )

    /// What erasing a user and a device touches, decided before anything changes.
    struct ErasurePlan {
        /// The slots of the memberships erased whole, ascending: every membership the user owns, every
        /// guest membership of the device that no user claimed.
        var erased: [Int] = []
        /// The slots of other users' memberships bought on the device (claimed from it, or bought there
        /// logged in): they stay with their owner, without the device.
        var detached: [Int] = []
        /// The slots of memberships the user owned until a transfer gave them to another user: they stay
        /// with their new owner, without the user in their history.
        var transferredAway: [Int] = []
        /// The audit entries that go with the erased memberships.
        var historyEntries = 0
    }

    /// The plan for erasing `user` and `device` (either may be `nil`). With a device it looks at every
    /// membership: a purchase made logged in on a device is indexed by its user only. Erasures are rare;
    /// the scan is one string comparison a membership.
    func erasurePlan(user: String?, device: String?) -> ErasurePlan {
        var plan = ErasurePlan()
        var erased = Set<Int>()
        if let user { erased.formUnion(ownedSlotsByUserList(user)) }
        if let device { erased.formUnion(unclaimedSlotsList(device)) }
        plan.erased = erased.sorted()
        if let user { plan.transferredAway = formerlyOwnedSlotsList(user).filter { !erased.contains($0) }.sorted() }
        if let device {
            for slot in 0..<memberships.count where !erased.contains(slot) && memberships[slot].device == device {
                plan.detached.append(slot)
            }
        }
        plan.historyEntries = plan.erased.reduce(0) { $0 + trailLength(ofSlot: $1) }
        return plan
    }

    /// Applies an erasure (`StoreChange.erase`) of `user` and `device` as `plan` says (made on this state),
    /// as the type's comment says, and records that it happened (`ErasureRecord`, which names no one).
    mutating func applyErasure(_ plan: ErasurePlan, user: String?, device: String?, sequence: UInt64, context: ChangeContext) {
        // The feed's item of the erasure names the ids erased, and its earlier items of them are passed
        // over from now on (their ids lead nowhere).
        feed.noteErasure(
            sequence: sequence,
            ErasedMemberships(
                erased: plan.erased.compactMap { memberships[$0].id.bits }, detached: plan.detached.compactMap { memberships[$0].id.bits }
            )
        )
        for slot in plan.erased { erase(slot: slot) }
        for slot in plan.detached { detachDevice(ofSlot: slot) }
        if let user { for slot in plan.transferredAway { forgetFormerOwner(user, ofSlot: slot) } }
        // A key names its membership by slot only, so the keys are searched. An erased membership's key
        // goes. A detached one stays with its owner, and so does its key, or the owner's retried grant
        // would create a second membership; unless the key holds an erased id (a key is often made from a
        // device's or a user's id), which would name the person.
        if !plan.erased.isEmpty || !plan.detached.isEmpty {
            let erased = Set(plan.erased.lazy.map { UInt32($0) })
            let detached = Set(plan.detached.lazy.map { UInt32($0) })
            let names = [user, device].compactMap { $0 }.filter { !$0.isEmpty }
            removeIdempotencyKeys { key, slot in
                erased.contains(slot) || (detached.contains(slot) && names.contains { key.contains($0) })
            }
        }
        erasures.append(
            ErasureRecord(sequence: sequence, context: context, memberships: plan.erased.count, historyEntries: plan.historyEntries)
        )
    }
}

extension StoreState {
    /// Whether `grant`, which does not match the membership at `slot` as created, is its user's retry of
    /// the grant that created it, sent again after an erasure of the device took the device off (there and
    /// in its revisions): the membership has the grant's user and no device, the grant names a device the
    /// store does not know (an erased device is forgotten), and the rest matches.
    func isRetryAfterDeviceErasure(_ grant: Grant, ofSlot slot: Int) -> Bool {
        guard let device = grant.subject.device, grant.subject.user != nil, !knowsDevice(device) else { return false }
        var created = membershipAsCreated(atSlot: slot)
        guard created.device == nil else { return false }
        created.device = device
        return grant.matches(created)
    }
}

extension Membership {
    /// Whether this is what an erased membership's slot holds (`StoreState.erasedMembership`).
    public var isErased: Bool { id.bits == nil }
}
