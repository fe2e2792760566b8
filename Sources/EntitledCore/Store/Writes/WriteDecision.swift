/// A write decided against the store's state, not yet applied: the change it makes (if any), what its
/// decision looked at (`footprint`), and how its writer's result is read once the change is applied.
///
/// A single server applies the change at once, under the same lock (`EntitlementStore.perform`). A node
/// of a cluster decides a group of writes against the state every node agreed on, commits their changes
/// to the system of record, and only then applies them (`EntitlementStore.carryOut`): until then, no
/// reader sees them.
public struct WriteDecision: Sendable {
    /// The change, or `nil` when the write changes nothing: a replayed grant, a claim of nothing, an
    /// ignored event, a refused write.
    public let change: StoreChange?
    /// Who made the change, when and why (meaningful only with `change`).
    public let context: ChangeContext
    /// What the decision looked at and the change touches.
    public let footprint: WriteFootprint
    let outcome: Outcome
    /// An erasure's plan, made on the state the erasure was decided on.
    let plannedErasure: StoreState.ErasurePlan?

    /// What the writer is told, or where to read it once the change is applied.
    enum Outcome: Sendable {
        /// The store refused the write; nothing changes.
        case refused(StoreError)
        /// Known already: the write changes nothing, or its change says everything.
        case known(WriteResult)
        /// A new membership: the one the change creates. Read from the change rather than held twice:
        /// each copy of a membership is a dozen calls to retain and release its strings.
        case created
        /// A lifecycle event with this outcome: the membership is the one the change records.
        case eventApplied(EventOutcome)
        /// A grant that moves this membership from `formerOwner` to the grant's user.
        case transferred(MembershipID, formerOwner: Subject?)
        /// A revocation of this membership.
        case revoked(MembershipID)
        /// An extension of this membership, which expired at `previousExpiresAt` before it.
        case extended(MembershipID, previousExpiresAt: Timestamp)
        /// A claim that moves these memberships.
        case claimed([MembershipID])
        /// A new definition of this entitlement.
        case defined(String)
    }

    /// The refusal, if the store refused the write.
    public var refusal: StoreError? {
        if case .refused(let error) = outcome { return error }
        return nil
    }

    init(
        change: StoreChange?, context: ChangeContext, footprint: WriteFootprint, outcome: Outcome,
        plannedErasure: StoreState.ErasurePlan? = nil
    ) {
        self.change = change
        self.context = context
        self.footprint = footprint
        self.outcome = outcome
        self.plannedErasure = plannedErasure
    }
}

/// A write once applied: what its writer is told, with the number of the store's last change then, and
/// what its watchers are told.
public struct AppliedWrite: Sendable {
    public var result: WriteResult
    /// The write's own change, or (for a write that changed nothing) the last change its result reflects:
    /// the write may be acknowledged once the journal or the cluster holds it.
    public var sequence: UInt64
    /// Whether the write made a change.
    public var changed: Bool
    /// For watchers, when asked for and the change concerns memberships.
    public var notice: AccessNotice?
}
