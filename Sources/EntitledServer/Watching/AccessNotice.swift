import EntitledCore

/// Memberships a write changed, told to the connections that watch their subjects once the change is
/// durable (`WatchHub.publish`).
public struct AccessNotice: Sendable {
    /// What changed them: `grant`, `claim`, `revoke` or an event type such as `renewal`.
    public var cause: String
    /// The memberships as the change left them.
    public var memberships: [Membership]

    public init(cause: String, memberships: [Membership]) {
        self.cause = cause
        self.memberships = memberships
    }
}
