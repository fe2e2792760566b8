import AsyncHTTPClient
import EntitledClient
import Foundation

/// The OAuth access token of the Play Developer API, asked of Google's token endpoint with the service
/// account's signed assertion (the JWT-bearer grant of RFC 7523,
/// https://developers.google.com/identity/protocols/oauth2/service-account#httprest) and kept until a
/// minute before it expires: one token request an hour, not one per call. Callers that ask while a request
/// is under way share its answer.
///
/// The token endpoint is called through a `StoreAPIClient` of its own: the Play Developer API client asks
/// for a token while a call holds its place in that client's `ConcurrencyLimit`, so the two must not share one.
actor GoogleAccessTokens {
    static let scope = "https://www.googleapis.com/auth/androidpublisher"

    let account: GoogleServiceAccount
    let tokenURL: String
    let client: StoreAPIClient
    private var cached: (token: String, expires: Int64)?
    private var pending: Task<String, any Error>?
    /// Tokens fetched so far (for the tests).
    private(set) var fetched = 0

    init(account: GoogleServiceAccount, tokenURL: String?, http: HTTPClient, policy: RetryPolicy) {
        self.account = account
        self.tokenURL = tokenURL ?? account.tokenURL
        client = StoreAPIClient(http: http, policy: policy, limit: ConcurrencyLimit(width: 1))
    }

    /// The `Authorization` header's value at `now` (Unix seconds).
    func authorization(now: Int64) async throws(StoreAPIError) -> String {
        if let cached, cached.expires - 60 > now { return "Bearer \(cached.token)" }
        let task: Task<String, any Error>
        if let pending {
            task = pending
        } else {
            task = Task { try await self.fetch(now: now) }
            pending = task
        }
        do {
            let token = try await task.value
            if pending == task { pending = nil }
            return "Bearer \(token)"
        } catch {
            if pending == task { pending = nil }
            throw error as? StoreAPIError ?? StoreAPIError(Self.call, .unavailable, "\(error)")
        }
    }

    static let call = StoreCall(store: "google_play", name: "OAuth token")

    private func fetch(now: Int64) async throws(StoreAPIError) -> String {
        let assertion: String
        do {
            assertion = try account.assertion(scope: Self.scope, audience: tokenURL, now: now)
        } catch {
            throw StoreAPIError(Self.call, .unauthorized, "cannot sign the service account's assertion: \(error)")
        }
        let form = [("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", assertion)]
            .map { "\($0.0)=\(StoreHTTP.escaped($0.1))" }.joined(separator: "&")
        let request = StoreAPIClient.Request(method: .POST, url: tokenURL, body: Array(form.utf8), contentType: "application/x-www-form-urlencoded")
        let reply = try await client.send(Self.call, request) { () async throws(StoreAPIError) -> String? in nil }
        guard reply.status == 200, let json = reply.json, let token = json["access_token"]?.stringValue else {
            // RFC 6749 §5.2's error object: `error` and `error_description`.
            let detail = [reply.json?["error"]?.stringValue, reply.json?["error_description"]?.stringValue].compactMap { $0 }.joined(separator: ": ")
            var failure = reply.failure(Self.call, detail: detail.isEmpty ? nil : detail, storeCode: reply.json?["error"]?.stringValue)
            // A 400 `invalid_grant` is a key Google refuses: a setting to fix, as a 401 is.
            if reply.status == 400 || reply.status == 401 { failure.kind = .unauthorized }
            failure.message += ": check the service account's key and its access to the Play Console"
            throw failure
        }
        let lifetime = Int64(json["expires_in"]?.intValue ?? 3600)
        cached = (token, now + lifetime)
        fetched += 1
        return token
    }
}
