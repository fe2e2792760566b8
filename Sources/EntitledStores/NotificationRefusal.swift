/// Why a store's notification was refused before anything was applied: answered with a 4xx status and
/// `reason` as a one-line body (which the store's dashboard shows), and logged without secrets or payload.
public struct NotificationRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong, as counted in the metrics (`refused` by reason).
    public enum Kind: String, Sendable, CaseIterable {
        /// The signature is missing, malformed or does not verify with any configured secret or key.
        case badSignature = "bad_signature"
        /// The signature's timestamp is outside the tolerance (a replay, or a clock far off).
        case staleTimestamp = "stale_timestamp"
        /// The certificate chain does not lead to the configured root, lacks the store's markers, or was
        /// not valid when the payload was signed.
        case untrustedChain = "untrusted_chain"
        /// Signed for another app (bundle id, app id) than this receiver serves.
        case wrongApp = "wrong_app"
        /// Verified, but not a notification this receiver can read (a required field missing or mistyped).
        case malformed
        /// The body is larger than `NotificationRefusal.maximumBodyBytes`.
        case tooLarge = "too_large"
        /// No such route, or a store whose settings are absent.
        case notFound = "not_found"
    }

    /// The largest body accepted: stores send a few kilobytes.
    public static let maximumBodyBytes = 1 << 20

    public var kind: Kind
    /// One line for the sender, without secrets.
    public var reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// The HTTP status answered.
    public var status: Int {
        switch kind {
        case .tooLarge: 413
        case .notFound: 404
        default: 400
        }
    }

    public var description: String { "\(kind.rawValue): \(reason)" }
}

/// A verified notification that could not be applied now: `entitled` could not take it (unreachable, or
/// refusing writes), or the store's own API could not be asked (Google Play). Answered 503 so that the
/// store delivers it again later.
public struct EntitledUnavailable: Error, Hashable, Sendable, CustomStringConvertible {
    public var reason: String

    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
