/// What importing one identifier did, as the report file's line for it says.
public struct ImportResult: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable {
        /// Something was written: a grant, events.
        case imported
        /// `entitled` held it all already: an earlier run, or the live notifications.
        case unchanged
        /// Nothing (or not all) was written; `reason` says why. Tried again by the next run.
        case failed
    }

    /// The journal's key: the source and the identifier (`stripe:sub_123`).
    public var key: String
    public var status: Status
    /// Why it failed, or what it did.
    public var reason: String?
    /// The user and membership it was imported for, when known.
    public var user: String?
    public var membership: String?
    /// What the source could not give (`renewal times`, `trial`): said in the report, so nobody assumes it.
    public var notes: [String]

    public init(key: String, status: Status, reason: String? = nil, user: String? = nil, membership: String? = nil, notes: [String] = []) {
        self.key = key
        self.status = status
        self.reason = reason
        self.user = user
        self.membership = membership
        self.notes = notes
    }

    /// The kind of failure for the summary: the reason's first words up to a colon (`not_found`, ...).
    public var failureKind: String {
        guard status == .failed, let reason else { return "" }
        return reason.split(separator: ":", maxSplits: 1).first.map(String.init) ?? reason
    }
}
