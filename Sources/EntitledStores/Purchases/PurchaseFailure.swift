/// Why a purchase reported at purchase time (`POST /purchases/...`) was not granted: answered with `status`
/// and a JSON error object `{"error":{"code":…,"message":…}}` for the app's backend.
public struct PurchaseFailure: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        /// The request is not a purchase this receiver can read (a field missing, unknown or mistyped). 400.
        case badRequest = "bad_request"
        /// The store does not know the purchase, or it is of another product or app, or not valid. 400.
        case invalidPurchase = "invalid_purchase"
        /// The purchase names another account than the request's user, or the transfer rule keeps it with
        /// the user who has it. 409.
        case otherAccount = "other_account"
        /// The store has not taken the payment yet: no access until it does (its notification grants it). 202.
        case pending
        /// The bearer token is missing or wrong. 401.
        case unauthorized
        /// This receiver serves no purchases of the store (its settings, or `--purchases-token-file`, are
        /// absent). 404.
        case notServed = "not_served"
        /// `entitled` or the store's API cannot be reached or did not confirm: try again; a repeat grants
        /// once. 503.
        case unavailable
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The HTTP status answered.
    public var status: Int {
        switch code {
        case .badRequest, .invalidPurchase: 400
        case .otherAccount: 409
        case .pending: 202
        case .unauthorized: 401
        case .notServed: 404
        case .unavailable: 503
        }
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// A failure of the writes or lookups a grant makes.
    init(_ failure: ReceiveFailure) {
        switch failure {
        case .refused(let refusal): self.init(.invalidPurchase, refusal.reason)
        case .unavailable(let unavailable): self.init(.unavailable, unavailable.reason)
        }
    }

    /// Runs `body`, a failure of its writes or lookups as a purchase's.
    static func attempting<Result>(_ body: () async throws(ReceiveFailure) -> Result) async throws(PurchaseFailure) -> Result {
        do {
            return try await body()
        } catch {
            throw PurchaseFailure(error)
        }
    }
}
