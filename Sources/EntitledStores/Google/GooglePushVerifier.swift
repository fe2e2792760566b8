import EntitledClient
import Foundation
import _CryptoExtras

/// Verifies the bearer token Pub/Sub puts on an authenticated push (an OpenID Connect ID token that Google
/// signs, RS256): signed by one of Google's current keys (fetched from `certificatesURL`, a JWK set, and
/// fetched again for a key id it does not know), issued by accounts.google.com, for `audience`, not
/// expired, and, when `email` is given, for that service account with a verified email.
/// (https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions)
actor GooglePushVerifier {
    let audience: String
    let email: String?
    let certificatesURL: String
    let http: StoreHTTP
    private var keys: [String: _RSA.Signing.PublicKey] = [:]
    private var fetchedAt: Int64 = 0

    init(audience: String, email: String?, certificatesURL: String, http: StoreHTTP) {
        self.audience = audience
        self.email = email
        self.certificatesURL = certificatesURL
        self.http = http
    }

    func verify(authorization: String?, now: Int64) async throws(ReceiveFailure) {
        guard let authorization, authorization.hasPrefix("Bearer ") else {
            throw .refused(NotificationRefusal(.badSignature, "the push has no bearer token (Authorization: Bearer ...)"))
        }
        let parts = authorization.dropFirst(7).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let claimsBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]), let header = JSONValue(strictUTF8: headerBytes),
            let claims = JSONValue(strictUTF8: claimsBytes)
        else { throw .refused(NotificationRefusal(.badSignature, "the push's bearer token is not a JWT")) }
        guard header["alg"]?.stringValue == "RS256", let keyID = header["kid"]?.stringValue else {
            throw .refused(NotificationRefusal(.badSignature, "the push's bearer token is not signed RS256 with a key id"))
        }
        var key = keys[keyID]
        if key == nil, now - fetchedAt > 60 {
            // A key not seen yet: Google rotates them. At most one fetch a minute, whatever is sent.
            try await refreshKeys(now: now)
            key = keys[keyID]
        }
        guard let key else { throw .refused(NotificationRefusal(.badSignature, "the push's bearer token is signed with a key Google does not list")) }
        guard key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: Array("\(parts[0]).\(parts[1])".utf8), padding: .insecurePKCS1v1_5)
        else { throw .refused(NotificationRefusal(.badSignature, "the push's bearer token's signature does not verify")) }
        let issuer = claims["iss"]?.stringValue
        guard issuer == "accounts.google.com" || issuer == "https://accounts.google.com" else {
            throw .refused(NotificationRefusal(.badSignature, "the push's bearer token is not issued by Google"))
        }
        guard claims["aud"]?.stringValue == audience else {
            throw .refused(NotificationRefusal(.badSignature, "the push's bearer token is for another audience than the configured one"))
        }
        guard let expires = claims["exp"]?.intValue, Int64(expires) > now else {
            throw .refused(NotificationRefusal(.staleTimestamp, "the push's bearer token has expired"))
        }
        if let email {
            guard claims["email"]?.stringValue == email, claims["email_verified"]?.boolValue == true else {
                throw .refused(NotificationRefusal(.badSignature, "the push's bearer token is for another service account than the configured one"))
            }
        }
    }

    private func refreshKeys(now: Int64) async throws(ReceiveFailure) {
        let reply: StoreHTTP.Reply
        do {
            reply = try await http.get(certificatesURL)
        } catch {
            throw .unavailable(EntitledUnavailable("cannot fetch Google's signing keys: \(error.reason)"))
        }
        guard reply.status == 200, let list = reply.json?["keys"]?.arrayValue else {
            throw .unavailable(EntitledUnavailable("Google's signing keys could not be read (\(reply.status))"))
        }
        var keys: [String: _RSA.Signing.PublicKey] = [:]
        for entry in list {
            guard let id = entry["kid"]?.stringValue, let n = entry["n"]?.stringValue.flatMap(Base64URL.decode),
                let e = entry["e"]?.stringValue.flatMap(Base64URL.decode), let key = try? _RSA.Signing.PublicKey(n: n, e: e)
            else { continue }
            keys[id] = key
        }
        self.keys = keys
        fetchedAt = now
    }
}
