import AsyncHTTPClient
import EntitledClient
import Foundation
import NIOHTTP1

/// A client of the App Store Server API (https://developer.apple.com/documentation/appstoreserverapi): a
/// subscription's statuses, a customer's transaction history and the history of the notifications Apple
/// sent, for imports, backfills and reconciliation beside the notifications themselves.
///
/// Every call carries the JWT of `AppStoreAPIToken` (the in-app purchase key). A call about a transaction
/// is made in production first and, when Apple does not know the transaction there
/// (`TransactionIdNotFoundError`, 4040010), in the sandbox, as that error's page advises: "You're making
/// the request in the same environment, production or sandbox, that generated the transaction ID"
/// (https://developer.apple.com/documentation/appstoreserverapi/transactionidnotfounderror). Every signed
/// item an answer holds (`signedTransactionInfo`, `signedRenewalInfo`, `signedTransactions`,
/// `signedPayload`) is verified as a notification's is (`AppleSignedData`: the chain up to the configured
/// root, Apple's markers, the signature) and returned decoded; a transaction of another bundle is refused.
/// Apple's 429 `Retry-After` is a UNIX time in milliseconds (`RetryAfterFormat.unixMilliseconds`).
public struct AppStoreServerAPI: Sendable {
    /// Where a call is made: production, or the sandbox (test purchases, TestFlight).
    public enum Environment: String, Sendable, Hashable, CaseIterable {
        case production = "Production"
        case sandbox = "Sandbox"
    }

    public struct Settings: Sendable, Hashable {
        /// The in-app purchase key's `.p8` file (PKCS#8 PEM), as App Store Connect gives it.
        public var privateKeyPEM: String
        /// The key's id (App Store Connect, Users and Access, Integrations, In-App Purchase).
        public var keyID: String
        /// The team's issuer id (same page).
        public var issuerID: String
        /// The app's bundle id: the token's `bid`, and every transaction returned must be of it.
        public var bundleID: String
        /// The trusted root certificates, PEM: Apple Root CA - G3 (the notifications' `--apple-root-ca`).
        public var rootCertificatesPEM: String
        /// `https://api.storekit.itunes.apple.com`, or a stand-in's address.
        public var productionURL: String
        /// `https://api.storekit-sandbox.itunes.apple.com`, or a stand-in's; nil: no sandbox fallback.
        public var sandboxURL: String?
        /// How long a token lives (2 to 60 minutes); it is reused until a minute before it expires.
        public var tokenLifetime: Duration
        /// Calls in flight at once. Apple allows 50 a second for these endpoints in production, 10% of
        /// that in the sandbox (https://developer.apple.com/documentation/appstoreserverapi/identifying-rate-limits).
        public var concurrency: Int

        public init(
            privateKeyPEM: String, keyID: String, issuerID: String, bundleID: String, rootCertificatesPEM: String,
            productionURL: String = "https://api.storekit.itunes.apple.com", sandboxURL: String? = "https://api.storekit-sandbox.itunes.apple.com",
            tokenLifetime: Duration = .seconds(300), concurrency: Int = 8
        ) {
            self.privateKeyPEM = privateKeyPEM
            self.keyID = keyID
            self.issuerID = issuerID
            self.bundleID = bundleID
            self.rootCertificatesPEM = rootCertificatesPEM
            self.productionURL = Self.trimmed(productionURL)
            self.sandboxURL = sandboxURL.map(Self.trimmed)
            self.tokenLifetime = tokenLifetime
            self.concurrency = concurrency
        }

        static func trimmed(_ url: String) -> String { url.hasSuffix("/") ? String(url.dropLast()) : url }
    }

    public let settings: Settings
    let client: StoreAPIClient
    let token: AppStoreAPIToken
    let signed: AppleSignedData
    static let store = "app_store"

    /// - Parameter policy: `.patient` for imports and reconciliation; `.once` where a caller waits.
    /// - Throws: when the key or the root certificates cannot be read.
    public init(settings: Settings, policy: RetryPolicy = .patient, httpClient: HTTPClient = .shared) throws(StoreAPISettingsError) {
        self.settings = settings
        token = try AppStoreAPIToken(
            privateKeyPEM: settings.privateKeyPEM, keyID: settings.keyID, issuerID: settings.issuerID, bundleID: settings.bundleID,
            lifetime: settings.tokenLifetime
        )
        do throws(NotificationRefusal) {
            signed = try AppleSignedData(rootCertificatesPEM: settings.rootCertificatesPEM)
        } catch {
            throw StoreAPISettingsError("the App Store root certificates: \(error.reason)")
        }
        client = StoreAPIClient(
            http: httpClient, policy: policy, limit: ConcurrencyLimit(width: settings.concurrency), retryAfterFormat: .unixMilliseconds,
            isRetryable: Self.isRetryable
        )
    }

    /// The base URL of `environment`.
    func baseURL(_ environment: Environment) -> String? {
        environment == .production ? settings.productionURL : settings.sandboxURL
    }

    /// Sends one call in `environment` and returns its 200 answer's JSON; any other answer is an error
    /// carrying Apple's `errorCode`.
    func call(
        _ call: StoreCall, _ environment: Environment, path: String, method: HTTPMethod = .GET, body: JSONValue? = nil
    ) async throws(StoreAPIError) -> JSONValue {
        guard let base = baseURL(environment) else { throw StoreAPIError(call, .notFound, "no sandbox URL is set") }
        let request = StoreAPIClient.Request(
            method: method, url: base + path, body: body.map { Array($0.jsonText.utf8) },
            contentType: body == nil ? nil : "application/json"
        )
        let token = token
        let reply = try await client.send(call, request) { () async throws(StoreAPIError) -> String? in
            try await token.authorization(now: Int64(Date().timeIntervalSince1970))
        }
        guard reply.status == 200 else { throw Self.failure(reply, call) }
        guard let json = reply.json else { throw StoreAPIError(call, .malformed, "answered 200 with a body that is not JSON") }
        return json
    }

    /// Runs `body` in production and, when Apple does not know the transaction there, in the sandbox.
    func productionThenSandbox<Result>(
        _ call: StoreCall, _ body: (Environment) async throws(StoreAPIError) -> Result
    ) async throws(StoreAPIError) -> Result {
        do throws(StoreAPIError) {
            return try await body(.production)
        } catch where error.storeCode == String(ErrorCode.transactionIDNotFound) && settings.sandboxURL != nil {
            return try await body(.sandbox)
        }
    }

    /// The payload of `jws` (an item named `what` of `call`'s answer), verified; a transaction must be of
    /// the configured bundle.
    func verified(_ jws: JSONValue?, what: String, _ call: StoreCall, isTransaction: Bool = false) async throws(StoreAPIError) -> JSONValue {
        guard let text = jws?.stringValue else { throw StoreAPIError(call, .malformed, "\(what) is missing or not a string") }
        let payload: JSONValue
        do throws(NotificationRefusal) {
            payload = try await signed.verify(text, what: what)
        } catch {
            throw StoreAPIError(call, .malformed, error.reason)
        }
        if isTransaction, let bundle = payload["bundleId"]?.stringValue, bundle != settings.bundleID {
            throw StoreAPIError(call, .malformed, "\(what) is a transaction of bundle \(bundle), not \(settings.bundleID)")
        }
        return payload
    }

    /// `environment` as the answer names it (`Production`, `Sandbox`), else the one asked.
    static func environment(of json: JSONValue, asked: Environment) -> Environment {
        json["environment"]?.stringValue.flatMap(Environment.init(rawValue:)) ?? asked
    }

    /// Tokens signed so far (for the tests: a token is reused until shortly before it expires).
    var tokensSigned: Int {
        get async { await token.signed }
    }
}
