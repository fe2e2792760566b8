/// The code of a failed response (PROTOCOL.md, "Error codes"), as a client tells them apart. A code this
/// client does not know (a newer server's) is kept as `unknown` with its text; treat it as the request
/// failing for a reason you cannot act on. Not a string literal on purpose: `code == .notFound` is checked
/// by the compiler, where `code == "not_fuond"` would compile and never match.
public enum ServerErrorCode: Hashable, Sendable, CustomStringConvertible {
    case badJSON, badRequest, unknownOp, notFound, conflict, tooLarge, unauthorized, forbidden, busy, tlsRequired
    case `internal`, unavailable, stale, outcomeUnknown, overLimit, loading
    /// A read of the change feed from before what it holds: take a full copy (`export`), then read the
    /// feed after the change number the copy names.
    case truncated
    /// A code this client does not know, as the server wrote it.
    case unknown(String)

    /// Every code this client knows, in PROTOCOL.md's order.
    public static let known: [ServerErrorCode] = [
        .badJSON, .badRequest, .unknownOp, .notFound, .conflict, .tooLarge, .unauthorized, .forbidden, .busy, .tlsRequired,
        .internal, .stale, .outcomeUnknown, .overLimit, .unavailable, .loading, .truncated,
    ]

    /// The code named `rawValue` on the wire.
    public init(rawValue: String) {
        self = Self.known.first { $0.rawValue == rawValue } ?? .unknown(rawValue)
    }

    /// The code's name on the wire.
    public var rawValue: String {
        switch self {
        case .badJSON: "bad_json"
        case .badRequest: "bad_request"
        case .unknownOp: "unknown_op"
        case .notFound: "not_found"
        case .conflict: "conflict"
        case .tooLarge: "too_large"
        case .unauthorized: "unauthorized"
        case .forbidden: "forbidden"
        case .busy: "busy"
        case .tlsRequired: "tls_required"
        case .internal: "internal"
        case .unavailable: "unavailable"
        case .stale: "stale"
        case .outcomeUnknown: "outcome_unknown"
        case .overLimit: "over_limit"
        case .loading: "loading"
        case .truncated: "truncated"
        case .unknown(let text): text
        }
    }

    public var description: String { rawValue }
}
