import EntitledClient

/// Why an export stopped before its last page was written. A file export then leaves no file behind
/// (its temporary file is removed); lines already written to standard output are an incomplete copy.
public enum ExportFailure: Error, Sendable, Hashable {
    /// The server could not be reached, or the connection failed (the server stopped mid-way, ...).
    case connection(EntitledClientError)
    /// The server refused a page: `not_found` when it no longer holds the export (it restarted, or the
    /// export was left unread for 300 s), `over_limit` when it holds 4 already, `forbidden` without an
    /// admin token.
    case refused(ServerFailure)
    /// An answer that is not a page of this export (no `export` or `memberships`, another export's
    /// `seq`, a `next` given twice): what it lacks.
    case malformedPage(String)
    /// The file could not be created, written or put in place; `reason` says which and why.
    case cannotWrite(path: String, reason: String)

    /// How the `export` command ends: 1 for a refused page (an error response), 2 otherwise, as a
    /// connection or usage error ends.
    public var outcome: CommandOutcome {
        switch self {
        case .refused: .failedOnServer
        case .connection, .malformedPage: .connectionError
        case .cannotWrite: .fileError
        }
    }
}
