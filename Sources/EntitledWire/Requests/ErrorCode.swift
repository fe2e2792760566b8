/// The machine-readable codes of failed responses. Part of the wire contract: codes are never renamed.
public enum ErrorCode: String, Sendable, CaseIterable {
    /// The line is not valid JSON (or not valid UTF-8).
    case badJSON = "bad_json"
    /// Valid JSON, but not a valid request: not an object, a field missing, of the wrong type or out of range.
    case badRequest = "bad_request"
    /// `op` names no operation this server knows.
    case unknownOp = "unknown_op"
    /// The membership or entitlement named does not exist.
    case notFound = "not_found"
    /// The request contradicts an earlier one: a grant's idempotency key reused for a different grant.
    case conflict
    /// The line is longer than the server's limit; the connection is closed after this response.
    case tooLarge = "too_large"
    /// Authentication is required or failed.
    case unauthorized
    /// Authenticated, but the role does not allow this operation.
    case forbidden
    /// The server is at a limit (connections, load) and refuses the request; retry later.
    case busy
    /// The server failed; the request may not have been carried out.
    case `internal`
    /// The write was not carried out, and certainly so: nothing of it is visible or kept anywhere, so a
    /// retry cannot make a duplicate. The server cannot take writes right now (its data directory's disk
    /// is full or failed, a cluster's database is unreachable, the node is stopping); the message gives
    /// the reason and whether writes resume by themselves. Reads go on.
    case unavailable
    /// A read asked with `minSeq` for a change this node's store had not applied within `--min-seq-wait`:
    /// the message says which change it has, which was asked and how long it waited. Retry, or ask
    /// another node.
    case stale
    /// The write may or may not have been carried out: the server lost sight of it at the moment it was
    /// being committed (a cluster's COMMIT whose answer was lost and whose fate could not be learned in
    /// time, a log that could not be cut back). Retry it with the same idempotency key (a replay answers
    /// `idempotentReplay`), or read to find out; never assume either way.
    case outcomeUnknown = "outcome_unknown"
    /// The request would go past a documented limit on the work one request may do: a `customer`,
    /// `history`, or `check`/`memberships` at an earlier moment, of a subject with more memberships than
    /// such a read goes through (`Limits.maximumMembershipsPerSubjectRead`). Not retried: the message
    /// says what to ask instead (`memberships`, page by page; `check` now).
    case overLimit = "over_limit"
    /// The server is starting and still loading its data (a snapshot, its log, or a cluster's database):
    /// it answers every request with this until it is ready. The error object says how far it has come
    /// (`loaded` of `total` memberships). Nothing was carried out; retry after a moment. Connections made
    /// while it loads are closed once it is ready: reconnect.
    case loading
    /// A read of the change feed asked for the changes after a number the feed no longer reaches back to
    /// (its retention let them go), or after a number that names no change of this history (a cluster's
    /// database lost changes in a failover). The message says what the feed holds; take a full copy
    /// (`export`) and follow the feed after the change number it names.
    case truncated
}

extension ErrorCode {
    /// A small number for each code, 0 up to the number of codes: an index for tables of counters.
    public var ordinal: Int {
        switch self {
        case .badJSON: 0
        case .badRequest: 1
        case .unknownOp: 2
        case .notFound: 3
        case .conflict: 4
        case .tooLarge: 5
        case .unauthorized: 6
        case .forbidden: 7
        case .busy: 8
        case .internal: 9
        case .unavailable: 10
        case .stale: 11
        case .outcomeUnknown: 12
        case .overLimit: 13
        case .loading: 14
        case .truncated: 15
        }
    }
}

/// A failed request: a code and a sentence a person can act on.
public struct WireError: Error, Hashable, Sendable {
    public var code: ErrorCode
    public var message: String
    /// For `truncated`: the oldest `afterSeq` the change feed accepts now, written in the error object, so
    /// that a reader (a webhook endpoint starting from the oldest change) goes on without parsing the message.
    public var oldestAfterSeq: UInt64?

    public init(_ code: ErrorCode, _ message: String, oldestAfterSeq: UInt64? = nil) {
        self.code = code
        self.message = message
        self.oldestAfterSeq = oldestAfterSeq
    }

    static func badRequest(_ message: String) -> WireError { WireError(.badRequest, message) }
}
