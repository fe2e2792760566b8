extension WriteFailure {
    /// What kept a write from being acknowledged: each case knows whether the change may have been made
    /// (`outcome`) and says so in the words its writer reads (`reason`), the one place they are written.
    public enum Cause: Sendable, Hashable {
        /// The store refused the write (`not_found`, `conflict`, …): it changed nothing.
        case refused(StoreError)
        /// The node is stopping: the write was never decided.
        case nodeStopping
        /// The node stopped before it learned whether the write's group committed.
        case stoppedBeforeFateKnown
        /// The node holds no connection to the database, so it takes no writes; `lastError` is the
        /// connection's last error (`nil` while the first connection is made).
        case databaseUnreachable(lastError: String?)
        /// The connection to the database was lost (`cause`) while the write waited for its group.
        case databaseLost(cause: String)
        /// The write waited `seconds` for a group without one being started for it (the cluster's write
        /// lock busy, or `lastError`): its group never reached the database.
        case notTakenInTime(seconds: Double, lastError: String?)
        /// The write's group was sent, but its commit was not confirmed within `seconds` (`lastError`, if
        /// any, is why): it may have committed.
        case commitNotConfirmedInTime(seconds: Double, lastError: String?)
        /// The write's group was found not to have committed after its commit went unanswered (`cause`).
        case notCommitted(cause: String)
        /// The write's group committed as changes `first` to `last`, but the database no longer shows them
        /// (a failover lost them): whether the change is there now is unknown.
        case committedChangesGone(first: UInt64, last: UInt64)
        /// The log did not make the change durable: undone in memory and not on disk, unless the log could
        /// not be cut back either (`JournalError.changeMayRemain`).
        case journal(JournalError)

        /// What the writer may conclude about the change.
        public var outcome: Outcome {
            switch self {
            case .refused, .nodeStopping, .databaseUnreachable, .databaseLost, .notTakenInTime, .notCommitted:
                return .notMade
            case .commitNotConfirmedInTime, .committedChangesGone, .stoppedBeforeFateKnown:
                return .unknown
            case .journal(let error):
                return error.changeMayRemain ? .unknown : .notMade
            }
        }

        /// What went wrong, in the writer's words.
        public var reason: String {
            switch self {
            case .refused(let error):
                return error.message
            case .nodeStopping:
                return "the node is stopping"
            case .stoppedBeforeFateKnown:
                return "the node stopped before it learned whether its last group of writes committed"
            case .databaseUnreachable(let lastError):
                return "the database is unreachable (\(lastError ?? "connecting")); writes are refused until it is back, checks still answer"
            case .databaseLost(let cause):
                return "the database is unreachable (\(cause))"
            case .notTakenInTime(let seconds, let lastError):
                return "the database did not take the write within \(seconds) s (\(lastError ?? "the cluster's write lock is busy"))"
            case .commitNotConfirmedInTime(let seconds, let lastError):
                return "the database did not confirm the commit within \(seconds) s (\(lastError ?? "no answer"))"
            case .notCommitted(let cause):
                return "the change was not committed (\(cause)); nothing was changed"
            case .committedChangesGone(let first, let last):
                return "its group was committed as changes \(first) to \(last), which the database no longer shows"
            case .journal(let error):
                return error.changeMayRemain ? error.reason : "\(error.reason) (it is undone, and not on disk)"
            }
        }
    }
}
