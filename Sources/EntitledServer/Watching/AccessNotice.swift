import EntitledCore

/// Memberships a write changed, told to the connections that watch their subjects once the change is
/// durable (`WatchHub.publish`).
public struct AccessNotice: Sendable {
    /// What changed them: `grant`, `claim`, `revoke`, `transfer` or an event type such as `renewal`.
    public var cause: String
    /// The memberships as the change left them.
    public var memberships: [Membership]
    /// The number of the change. Each writer's notices are published when its own write is durable, so
    /// two connections' changes can reach a watcher in either order: the number lets it keep the newest.
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
