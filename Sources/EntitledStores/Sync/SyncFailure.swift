/// Why one subscription could not be brought to its store's state: the store's API failed
/// (`StoreAPIError`), `entitled` could not take the writes, or the store's answer could not be applied.
public struct SyncFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// A short kind for summaries and metrics: `not_found`, `rate_limited`, `unavailable`, `unauthorized`,
    /// `entitled_unavailable`, `refused`, `malformed`, `no_user`.
    public var kind: String
    public var message: String
    /// Whether a later run may succeed where this one failed.
    public var mayPassLater: Bool

    public init(kind: String, message: String, mayPassLater: Bool) {
        self.kind = kind
        self.message = message
        self.mayPassLater = mayPassLater
    }

    public init(_ error: StoreAPIError) {
        self.init(kind: error.kind.rawValue, message: error.description, mayPassLater: error.mayPassLater)
    }

    public init(_ failure: ReceiveFailure) {
        switch failure {
        case .unavailable(let unavailable):
            self.init(kind: "entitled_unavailable", message: unavailable.reason, mayPassLater: true)
        case .refused(let refusal):
            self.init(kind: "refused", message: refusal.reason, mayPassLater: false)
        }
    }

    public var description: String { "\(kind): \(message)" }

    /// The kind of a membership its store's API cannot be asked about (a Google Play purchase imported by
    /// its order id, without the purchase token the API needs): not a failure to report on every run.
    public static let cannotBeAsked = "cannot_be_asked"
}
