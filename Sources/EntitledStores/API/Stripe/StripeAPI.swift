import AsyncHTTPClient
import EntitledClient
import Foundation
import NIOHTTP1

/// A client of the Stripe API (https://docs.stripe.com/api): subscriptions (list, retrieve), events (list)
/// and invoice payments, for imports, backfills and reconciliation, and for the webhook receiver's one call
/// (which invoice a refunded payment paid).
///
/// Authenticated with the account's secret or restricted key as a bearer token
/// (https://docs.stripe.com/api/authentication). Stripe's error object
/// (`{"error": {"type", "code", "message", "param"}}`, https://docs.stripe.com/api/errors) is read into the
/// error's message, its `code` (else `type`) kept as the store's code. Stripe's rate limits are per
/// account, 100 read requests a second in live mode and 25 in test mode (https://docs.stripe.com/rate-limits);
/// over them it answers 429.
public struct StripeAPI: Sendable {
    /// `https://api.stripe.com`, or a stand-in's address.
    public let apiURL: String
    let key: String
    let client: StoreAPIClient
    static let store = "stripe"

    /// - Parameters:
    ///   - secretKey: a secret (`sk_...`) or restricted (`rk_...`) key with read access to subscriptions,
    ///     events and invoices.
    ///   - policy: `.patient` for imports and reconciliation; `.once` where a caller waits.
    ///   - concurrency: calls in flight at once.
    public init(secretKey: String, apiURL: String = "https://api.stripe.com", policy: RetryPolicy = .patient, concurrency: Int = 4, httpClient: HTTPClient = .shared) {
        key = secretKey
        self.apiURL = apiURL.hasSuffix("/") ? String(apiURL.dropLast()) : apiURL
        client = StoreAPIClient(http: httpClient, policy: policy, limit: ConcurrencyLimit(width: concurrency))
    }

    /// The 200 answer's JSON of `GET path` (with its query, written by the caller).
    func get(_ call: StoreCall, _ path: String) async throws(StoreAPIError) -> JSONValue {
        let authorization = "Bearer \(key)"
        let reply = try await client.send(call, StoreAPIClient.Request(url: apiURL + path)) { () async throws(StoreAPIError) -> String? in authorization }
        guard reply.status == 200 else { throw Self.failure(reply, call) }
        guard let json = reply.json else { throw StoreAPIError(call, .malformed, "answered 200 with a body that is not JSON") }
        return json
    }

    /// One page of a list call: Stripe's list object (`{"object": "list", "data", "has_more"}`,
    /// https://docs.stripe.com/api/pagination).
    func page(_ call: StoreCall, _ path: String) async throws(StoreAPIError) -> StripeListPage {
        let json = try await get(call, path)
        guard let data = json["data"]?.arrayValue, let hasMore = json["has_more"]?.boolValue else {
            throw StoreAPIError(call, .malformed, "the answer is not a list object (data, has_more)")
        }
        let last = data.last?["id"]?.stringValue
        if hasMore, last == nil { throw StoreAPIError(call, .malformed, "has_more is true but the page's last object has no id") }
        return StripeListPage(data: data, hasMore: hasMore, next: hasMore ? last : nil)
    }

    /// Stripe's error object read into the error of `call`.
    static func failure(_ reply: StoreAPIClient.Reply, _ call: StoreCall) -> StoreAPIError {
        let error = reply.json?["error"]
        let code = error?["code"]?.stringValue ?? error?["type"]?.stringValue
        let labels = [error?["type"]?.stringValue, error?["code"]?.stringValue, error?["param"]?.stringValue.map { "param \($0)" }].compactMap { $0 }
        let detail = [error?["message"]?.stringValue, labels.isEmpty ? nil : "(\(labels.joined(separator: ", ")))"].compactMap { $0 }.joined(separator: " ")
        return reply.failure(call, detail: detail.isEmpty ? nil : detail, storeCode: code)
    }

    /// `name=value` pairs as a query string (`?a=1&b=2`), values percent-encoded; names are written encoded
    /// by the caller (`expand%5B%5D`).
    static func query(_ pairs: [(String, String)]) -> String {
        pairs.isEmpty ? "" : "?" + pairs.map { "\($0.0)=\(StoreHTTP.escaped($0.1))" }.joined(separator: "&")
    }
}
