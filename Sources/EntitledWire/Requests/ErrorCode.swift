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
    /// The server cannot take writes right now (its data directory's disk is full or failed); the
    /// message gives the reason and whether writes resume by themselves or after a restart. A write
    /// answered with it was not carried out: nothing of it is visible or kept. Reads go on.
    case unavailable
    /// A read asked with `minSeq` for a change this node's store had not applied within `--min-seq-wait`:
    /// the message says which change it has, which was asked and how long it waited. Retry, or ask
    /// another node.
    case stale
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
        }
    }
}

/// A failed request: a code and a sentence a person can act on.
public struct WireError: Error, Hashable, Sendable {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    static func badRequest(_ message: String) -> WireError { WireError(.badRequest, message) }
}
