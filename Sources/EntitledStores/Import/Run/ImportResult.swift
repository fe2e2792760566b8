/// What importing one identifier did, as the report file's line for it says.
public struct ImportResult: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable {
        /// Something was written: a grant, events.
        case imported
        /// `entitled` held it all already: an earlier run, or the live notifications.
        case unchanged
        /// Nothing to import: a purchase that gives no access (a payment pending, a subscription never paid).
        case skipped
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
    /// For a failure: whether trying again may succeed (the store or `entitled` was unavailable).
    public var mayPassLater: Bool

    public init(
        key: String, status: Status, reason: String? = nil, user: String? = nil, membership: String? = nil, notes: [String] = [], mayPassLater: Bool = false
    ) {
        self.key = key
        self.status = status
        self.reason = reason
        self.user = user
        self.membership = membership
        self.notes = notes
        self.mayPassLater = mayPassLater
    }

    /// The result of bringing `key` to its store's state.
    public init(key: String, _ outcome: StateSyncOutcome) {
        let user = outcome.membership?.user
        let membership = outcome.membership?.id
        switch outcome.outcome {
        case .applied(let changes):
            self.init(key: key, status: .imported, reason: "\(changes) change\(changes == 1 ? "" : "s")", user: user, membership: membership, notes: outcome.notes)
        case .duplicate:
            self.init(key: key, status: .unchanged, user: user, membership: membership, notes: outcome.notes)
        case .ignored(let reason):
            // A state the membership already had (`older than ...`, `revoked`) changed nothing; a purchase
            // that grants no access is skipped.
            self.init(key: key, status: membership == nil ? .skipped : .unchanged, reason: reason, user: user, membership: membership, notes: outcome.notes)
        case .unmatched(let reason):
            self.init(key: key, status: .failed, reason: "unmatched: \(reason)", user: user, membership: membership, notes: outcome.notes)
        case .awaitingPurchase(_, let reason):
            self.init(key: key, status: .failed, reason: "no_user: \(reason)", notes: outcome.notes)
        }
    }

    /// A failure to bring `key` to its store's state.
    public init(key: String, _ failure: SyncFailure) {
        self.init(key: key, status: .failed, reason: failure.description, mayPassLater: failure.mayPassLater)
    }

    /// The kind of failure for the summary: the reason's first words up to a colon (`not_found`, ...).
    public var failureKind: String {
        guard status == .failed, let reason else { return "" }
        return reason.split(separator: ":", maxSplits: 1).first.map(String.init) ?? reason
    }
}
