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
