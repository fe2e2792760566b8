/// One entry of an audit trail: a change, who made it, when and why, and what it left behind.
public struct AuditEntry: Hashable, Sendable {
    /// The number of the change; `nil` for a grant that kept no revision (see `MembershipRevision`),
    /// whose number the store does not keep.
    public var sequence: UInt64?
    public var context: ChangeContext
    public var change: Change

    public init(sequence: UInt64?, context: ChangeContext, change: Change) {
        self.sequence = sequence
        self.context = context
        self.change = change
    }

    /// What changed.
    public enum Change: Hashable, Sendable {
        /// A membership, as it was right after the change.
        case membership(MembershipRevision.Action, after: Membership)
        /// An entitlement's products were replaced.
        case catalog(entitlement: String, products: [String])
        /// An entitlement was removed from the catalog; `products` are those it had.
        case catalogRemoval(entitlement: String, products: [String])
        /// A person was erased: how many memberships and audit entries went, and nothing about whom.
        case erasure(memberships: Int, historyEntries: Int)
    }

    /// The action's name in the protocol: `grant`, `claim`, `revoke`, an event type, `define`,
    /// `undefine` or `erase`.
    public var actionName: String {
        switch change {
        case .membership(let action, _): action.name
        case .catalog: "define"
        case .catalogRemoval: "undefine"
        case .erasure: "erase"
        }
    }
}
