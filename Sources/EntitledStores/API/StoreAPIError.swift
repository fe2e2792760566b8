/// Why a call of a store's API gave no usable answer, naming the call (store, call, identifier).
public struct StoreAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// 429 until the retries ran out, or a `Retry-After` longer than the policy waits.
        case rateLimited = "rate_limited"
        /// No answer, a timeout, or a 5xx until the retries ran out: the store may answer later.
        case unavailable
        /// 401 or 403: the credentials (key, service account, API key) are refused. A setting to fix.
        case unauthorized
        /// The store does not know what the call named (404 and the store's "not found" codes).
        case notFound = "not_found"
        /// Any other 4xx: the call itself is wrong for the store (a bad identifier, a window too old).
        case refused
        /// A 2xx whose body is not what the store's reference documents.
        case malformed
    }

    public var call: StoreCall
    public var kind: Kind
    /// What happened, in the store's words where it gave some (its error code and message).
    public var message: String
    /// The store's own error code, when its answer had one: the App Store's `errorCode` (`4040010`),
    /// Stripe's `error.code` (`resource_missing`), Google's `error.status` (`NOT_FOUND`).
    public var storeCode: String?

    public init(_ call: StoreCall, _ kind: Kind, _ message: String, storeCode: String? = nil) {
        self.call = call
        self.kind = kind
        self.message = message
        self.storeCode = storeCode
    }

    /// Whether trying again later may succeed (the importer keeps such an identifier for its next run).
    public var mayPassLater: Bool { kind == .rateLimited || kind == .unavailable }

    public var description: String { "\(call): \(message)" }
}
