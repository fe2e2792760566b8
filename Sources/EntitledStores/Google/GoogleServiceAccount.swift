import Crypto
import EntitledClient
import Foundation
import _CryptoExtras

/// A Google service account's JSON key (the file the Cloud console downloads): its email, its RSA private
/// key, and the OAuth token endpoint. The key signs RS256 assertions for OAuth tokens (RFC 7523); it is
/// never logged.
public struct GoogleServiceAccount: Sendable {
    public var email: String
    public var tokenURL: String
    let key: _RSA.Signing.PrivateKey

    public init(json: String) throws(NotificationRefusal) {
        guard let key = try? JSONValue(parsing: json), let email = key["client_email"]?.stringValue,
            let pem = key["private_key"]?.stringValue
        else { throw NotificationRefusal(.malformed, "the service account key file is not a JSON key with client_email and private_key") }
        guard let privateKey = try? _RSA.Signing.PrivateKey(pemRepresentation: pem) else {
            throw NotificationRefusal(.malformed, "the service account key's private_key is not an RSA key of 2048 bits or more")
        }
        self.email = email
        self.tokenURL = key["token_uri"]?.stringValue ?? "https://oauth2.googleapis.com/token"
        self.key = privateKey
    }

    /// A signed JWT asking for `scope` at `audience` (the token URL), valid for an hour from `now`.
    func assertion(scope: String, audience: String, now: Int64) throws -> String {
        let header = #"{"alg":"RS256","typ":"JWT"}"#
        let claims = JSONValue.object([
            ("iss", .string(email)), ("scope", .string(scope)), ("aud", .string(audience)), ("iat", .number(String(now))),
            ("exp", .number(String(now + 3600))),
        ])
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.jsonText.utf8))
        let signature = try key.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }
}

/// The OAuth access token of the Play Developer API, fetched with the service account's assertion and
/// kept until a minute before it expires (one token request an hour, not one per notification).
actor GoogleAccessTokens {
    static let scope = "https://www.googleapis.com/auth/androidpublisher"

    let account: GoogleServiceAccount
    let tokenURL: String
    let http: StoreHTTP
    private var cached: (token: String, expires: Int64)?
    /// Tokens fetched so far (for the metrics and the tests).
    private(set) var fetched = 0

    init(account: GoogleServiceAccount, tokenURL: String?, http: StoreHTTP) {
        self.account = account
        self.tokenURL = tokenURL ?? account.tokenURL
        self.http = http
    }

    func token(now: Int64) async throws(StoreHTTP.Unavailable) -> String {
        if let cached, cached.expires - 60 > now { return cached.token }
        let assertion: String
        do {
            assertion = try account.assertion(scope: Self.scope, audience: tokenURL, now: now)
        } catch {
            throw StoreHTTP.Unavailable(reason: "cannot sign the service account's assertion: \(error)")
        }
        let reply = try await http.postForm(tokenURL, [("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", assertion)])
        guard reply.status == 200, let json = reply.json, let token = json["access_token"]?.stringValue else {
            throw StoreHTTP.Unavailable(reason: "Google's OAuth endpoint refused the service account (\(reply.status)): check the key and its access to the Play Console")
        }
        let lifetime = Int64(json["expires_in"]?.intValue ?? 3600)
        cached = (token, now + lifetime)
        fetched += 1
        return token
    }
}
