/// Memberships a change touched, as its watchers are told once the change is committed (durable in the
/// log, or committed by the cluster). Built in one place, from the change and the state right after it
/// (`StoreState+Notices.swift`), whichever node or connection made the change.
public struct AccessNotice: Sendable {
    /// What changed them: `grant`, `claim`, `revoke`, `transfer`, `extend`, `erase` or an event type such as
    /// `renewal`.
    public var cause: String
    /// The memberships as the change left them (for an erasure: as they were, revoked as `erased`, the
    /// last time anything says they existed).
    public var memberships: [Membership]
    /// The number of the change. Notices can reach a watcher in another order than their changes were
    /// made (each loop publishes what its writers wait for): the number lets it keep the newest.
    public var sequence: UInt64
    /// For a transfer: the owner the memberships were taken from, whose watchers are told too (the
    /// memberships as they are now name their new owner only).
    public var formerOwner: Subject?

    public init(cause: String, memberships: [Membership], sequence: UInt64, formerOwner: Subject? = nil) {
        self.cause = cause
        self.memberships = memberships
        self.sequence = sequence
        self.formerOwner = formerOwner
    }
}
