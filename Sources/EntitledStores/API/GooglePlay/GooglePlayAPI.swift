import AsyncHTTPClient
import EntitledClient
import Foundation
import NIOHTTP1

/// A client of the Google Play Developer API's purchases
/// (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases): a subscription's state
/// (`purchases.subscriptionsv2.get`), a one-time purchase (`purchases.products.get`), their
/// acknowledgement, and the purchases voided lately (`purchases.voidedpurchases.list`), with the service
/// account's OAuth token (`GoogleAccessTokens`). The live receiver uses it with `RetryPolicy.once`, an
/// import or reconciliation with `.patient`.
///
/// Google's error object (`{"error": {"code", "message", "status", "errors": [{"reason"}]}}`,
/// https://cloud.google.com/apis/design/errors#http_mapping) is read into the error's message, its
/// `status` (or first `reason`) kept as the store's code. The API's quotas are per project
/// (https://developers.google.com/android-publisher/quotas): 200,000 queries a day, fewer for
/// voided purchases; over them Google answers 429.
public struct GooglePlayAPI: Sendable {
    /// The app's package name.
    public let packageName: String
    /// `https://androidpublisher.googleapis.com`, or a stand-in's address.
    public let apiURL: String
    let client: StoreAPIClient
    let tokens: GoogleAccessTokens
    static let store = "google_play"

    /// - Parameters:
    ///   - serviceAccount: the service account's JSON key, read (`GoogleServiceAccount(json:)`); it needs
    ///     access to the app in the Play Console.
    ///   - tokenURL: the OAuth token endpoint; nil: the key's `token_uri`.
    ///   - policy: `.patient` for imports and reconciliation; `.once` where a caller waits.
    ///   - concurrency: calls in flight at once.
    public init(
        packageName: String, serviceAccount: GoogleServiceAccount, apiURL: String = "https://androidpublisher.googleapis.com", tokenURL: String? = nil,
        policy: RetryPolicy = .patient, concurrency: Int = 4, httpClient: HTTPClient = .shared
    ) {
        self.packageName = packageName
        self.apiURL = apiURL.hasSuffix("/") ? String(apiURL.dropLast()) : apiURL
        client = StoreAPIClient(http: httpClient, policy: policy, limit: ConcurrencyLimit(width: concurrency))
        tokens = GoogleAccessTokens(account: serviceAccount, tokenURL: tokenURL, http: httpClient, policy: policy)
    }

    /// `purchases.subscriptionsv2.get`
    /// (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2/get): the
    /// `SubscriptionPurchaseV2` of `purchaseToken`.
    /// - Throws: `notFound` when Google does not know the token (404, or 410 for a purchase too old to keep).
    public func subscription(purchaseToken: String) async throws(StoreAPIError) -> JSONValue {
        let call = StoreCall(store: Self.store, name: "purchases.subscriptionsv2.get", identifier: purchaseToken)
        return try await json(call, get: "subscriptionsv2/tokens/\(StoreHTTP.escaped(purchaseToken))")
    }

    /// `purchases.products.get`
    /// (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.products/get): the
    /// `ProductPurchase` of one-time product `productID` bought with `purchaseToken`.
    /// - Throws: `notFound` when Google does not know the token for the product.
    public func product(_ productID: String, purchaseToken: String) async throws(StoreAPIError) -> JSONValue {
        let call = StoreCall(store: Self.store, name: "purchases.products.get", identifier: purchaseToken)
        return try await json(call, get: "products/\(StoreHTTP.escaped(productID))/tokens/\(StoreHTTP.escaped(purchaseToken))")
    }

    /// What an acknowledgement is of: a subscription (`purchases.subscriptions.acknowledge`) or a one-time
    /// product (`purchases.products.acknowledge`).
    public enum PurchaseKind: String, Sendable {
        case subscription = "subscriptions"
        case product = "products"
    }

    /// Acknowledges a purchase (Google refunds one not acknowledged within three days,
    /// https://developer.android.com/google/play/billing/integrate#process): `POST
    /// .../purchases/{subscriptions|products}/{productID}/tokens/{token}:acknowledge`
    /// (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptions/acknowledge).
    /// A purchase acknowledged already is answered 400, which is success here.
    public func acknowledge(_ kind: PurchaseKind, productID: String, purchaseToken: String) async throws(StoreAPIError) {
        let call = StoreCall(store: Self.store, name: "purchases.\(kind.rawValue).acknowledge", identifier: purchaseToken)
        let reply = try await send(
            call, method: .POST, path: "\(kind.rawValue)/\(StoreHTTP.escaped(productID))/tokens/\(StoreHTTP.escaped(purchaseToken)):acknowledge",
            body: Array("{}".utf8)
        )
        guard (200..<300).contains(reply.status) || reply.status == 400 else { throw Self.failure(reply, call) }
    }

    /// The purchase API's URL for `path` (below `.../applications/{packageName}/purchases/`).
    func url(_ path: String) -> String {
        "\(apiURL)/androidpublisher/v3/applications/\(StoreHTTP.escaped(packageName))/purchases/\(path)"
    }

    func send(_ call: StoreCall, method: HTTPMethod = .GET, path: String, body: [UInt8]? = nil) async throws(StoreAPIError) -> StoreAPIClient.Reply {
        let request = StoreAPIClient.Request(method: method, url: url(path), body: body, contentType: body == nil ? nil : "application/json")
        let tokens = tokens
        return try await client.send(call, request) { () async throws(StoreAPIError) -> String? in
            try await tokens.authorization(now: Int64(Date().timeIntervalSince1970))
        }
    }

    /// The 200 answer's JSON of a GET of `path`.
    func json(_ call: StoreCall, get path: String) async throws(StoreAPIError) -> JSONValue {
        let reply = try await send(call, path: path)
        guard reply.status == 200 else { throw Self.failure(reply, call) }
        guard let json = reply.json else { throw StoreAPIError(call, .malformed, "answered 200 with a body that is not JSON") }
        return json
    }

    /// Google's error object read into the error of `call`.
    static func failure(_ reply: StoreAPIClient.Reply, _ call: StoreCall) -> StoreAPIError {
        let error = reply.json?["error"]
        let code = error?["status"]?.stringValue ?? error?["errors"]?.arrayValue?.first?["reason"]?.stringValue
        let detail = [error?["message"]?.stringValue, code.map { "(\($0))" }].compactMap { $0 }.joined(separator: " ")
        return reply.failure(call, detail: detail.isEmpty ? nil : detail, storeCode: code)
    }

    /// OAuth tokens fetched so far (for the tests: one an hour, shared by the calls).
    var tokensFetched: Int {
        get async { await tokens.fetched }
    }
}
