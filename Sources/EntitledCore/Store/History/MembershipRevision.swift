/// One change of one membership, kept for its audit trail and for checks of the past: who made it, when,
/// why, what it did, and the membership as it was before.
///
/// A membership's revisions are kept oldest first. The membership as it was at a moment `t` is the
/// `before` of its first revision that took effect after `t`, or the membership as it is now when none
/// did. A plain grant, the most common change by far, keeps no revision: its trail entry is read from
/// the membership itself (`createdAt`), so a million grants cost no history memory. A grant keeps a
/// creation revision (with `before == nil`) only when it has something the membership does not record:
/// an actor other than `local`, or a reason.
public struct MembershipRevision: Hashable, Sendable {
    /// The number of the change.
    public var sequence: UInt64
    public var context: ChangeContext
    public var action: Action
    /// When it took effect: when it was recorded, except for a lifecycle event, which took effect at its
    /// `eventTime` (never before the membership's previous revision, never after it was recorded).
    public var effectiveAt: Timestamp
    /// The membership before the change, without its lifecycle's `transactions` and `appliedEventIDs`
    /// (lists that only grow, which every revision would otherwise repeat); `nil` for its creation.
    public var before: Membership?

    public init(sequence: UInt64, context: ChangeContext, action: Action, effectiveAt: Timestamp, before: Membership?) {
        self.sequence = sequence
        self.context = context
        self.action = action
        self.effectiveAt = effectiveAt
        self.before = before
    }

    /// When its audit entry is dated: when the change was recorded, but for a grant the membership's
    /// `createdAt`, as a plain grant's entry (which keeps no revision) is. The two differ only for an
    /// imported purchase (`Grant.purchasedAt`), whose entry stands where the purchase happened.
    public var trailTime: Timestamp {
        if case .grant = action { return effectiveAt }
        return context.recordedAt
    }

    /// The context its audit entry shows: `context`, dated `trailTime`.
    var trailContext: ChangeContext {
        var shown = context
        shown.recordedAt = trailTime
        return shown
    }

    /// What a change did to a membership.
    public enum Action: Hashable, Sendable {
        /// Created by a grant.
        case grant
        /// Given to a user by a claim on the device it was bought on.
        case claim
        /// Revoked by a `revoke`.
        case revoke
        /// Changed by a lifecycle event.
        case event(LifecycleEvent)
        /// Moved to another user by a grant reporting the same purchase for them (`TransferRule.transfer`).
        case transfer
        /// Its expiry moved later by an `extend`, from `previousExpiresAt` (the revision's `before` says
        /// so too; the action keeps it so that an audit entry, which shows the membership after the
        /// change, can say what it was).
        case extend(previousExpiresAt: Timestamp)

        /// The action's name in the protocol (an event's is its type, e.g. `renewal`).
        public var name: String {
            switch self {
            case .grant: "grant"
            case .claim: "claim"
            case .revoke: "revoke"
            case .event(let event): event.kind.name
            case .transfer: "transfer"
            case .extend: "extend"
            }
        }
    }
}

/// One change of the catalog, for its audit trail.
public struct CatalogRevision: Hashable, Sendable {
    public var sequence: UInt64
    public var context: ChangeContext
    public var entitlement: String
    /// The products that unlock it from then on (sorted, without duplicates); for a removal, the products
    /// it had.
    public var products: [String]
    /// Whether the change removed the entitlement (`undefine`) rather than set its products (`define`).
    public var isRemoval: Bool

    public init(sequence: UInt64, context: ChangeContext, entitlement: String, products: [String], isRemoval: Bool = false) {
        self.sequence = sequence
        self.context = context
        self.entitlement = entitlement
        self.products = products
        self.isRemoval = isRemoval
    }
}
