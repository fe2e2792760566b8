/// Why the journal (the log, or a cluster's database) did not make a change durable.
public enum JournalError: Error, Hashable, Sendable {
    /// The log's disk is full or failed (`cause` says which, and whether writes resume by themselves).
    /// With `changeMayRemain`, the log could not be cut back to its acknowledged changes either, so the
    /// failed change may still be on disk and a restart could bring it back: its writer must be told the
    /// outcome is unknown.
    case outage(cause: String, changeMayRemain: Bool)
    /// The log failed and gave no cause.
    case failed
    /// The log is closed: the server is stopping.
    case closed
    /// A cluster node was asked to record a change outside its database, which must never happen.
    case outsideTheDatabase
    /// A cluster snapshot was asked for while another node writes one.
    case snapshotInProgress
    /// A cluster snapshot failed (`cause`: the database's error).
    case snapshotFailed(cause: String)

    /// Whether the failed change may still be on disk (see `outage`).
    public var changeMayRemain: Bool {
        if case .outage(_, true) = self { return true }
        return false
    }

    /// What went wrong, for the operator and the client's error message.
    public var reason: String {
        switch self {
        case .outage(let cause, false):
            return cause
        case .outage(let cause, true):
            return cause + "; the log could not be cut back to the acknowledged changes either, so a restart may bring this change back"
        case .failed:
            return "the log failed"
        case .closed:
            return "the log is closed"
        case .outsideTheDatabase:
            return "in cluster mode every change goes through the database, and this one did not"
        case .snapshotInProgress:
            return "another node is writing a snapshot now; try again shortly"
        case .snapshotFailed(let cause):
            return cause
        }
    }
}
