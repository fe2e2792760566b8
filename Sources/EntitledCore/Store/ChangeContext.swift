/// Who made a change, when, and why: what the audit trail records of every change besides the change
/// itself. It travels with the change through the journal, so that the trail survives a restart.
public struct ChangeContext: Hashable, Sendable {
    /// Who made it: the name of the authenticated client, or `ChangeContext.localActor` while the server
    /// has no authentication.
    public var actor: String
    /// Why, in the words of whoever made it (`refund`, a support ticket); `nil` when none was given.
    public var reason: String?
    /// When the store recorded it, by the store's clock.
    public var recordedAt: Timestamp

    /// The actor of every change made without authentication.
    public static let localActor = "local"

    public init(actor: String = ChangeContext.localActor, reason: String? = nil, recordedAt: Timestamp) {
        self.actor = actor
        self.reason = reason
        self.recordedAt = recordedAt
    }
}

/// Who asks for a change and why: the part of a `ChangeContext` the caller decides (the store adds the
/// time).
public struct ChangeAuthor: Hashable, Sendable {
    public var actor: String
    public var reason: String?

    /// An unauthenticated change with no reason.
    public static let local = ChangeAuthor()

    public init(actor: String = ChangeContext.localActor, reason: String? = nil) {
        self.actor = actor
        self.reason = reason
    }
}
