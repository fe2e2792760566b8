import Foundation
import JWTKit

/// The App Store Server API's bearer token: a JWT signed ES256 with the in-app purchase key (the `.p8` file
/// App Store Connect gives, a PKCS#8 PEM P-256 key), as "Generating JSON Web Tokens for API requests" sets
/// it out (https://developer.apple.com/documentation/appstoreserverapi/generating-json-web-tokens-for-api-requests):
/// header `alg` ES256, `kid` the key id, `typ` JWT; claims `iss` the issuer id, `iat`, `exp` (Apple refuses
/// a token whose `exp` is more than 60 minutes after its `iat`), `aud` `appstoreconnect-v1`, `bid` the
/// bundle id. Signed with JWTKit.
///
/// A token lives `lifetime` (5 minutes) and is reused until a minute before it expires: one signature per
/// few hundred calls of an import, not one per call. (Apple's page says to make a new token for each
/// request; it also says the token is valid until `exp`, which is what its servers check.)
actor AppStoreAPIToken {
    static let audience = "appstoreconnect-v1"

    let key: ES256PrivateKey
    let keys = JWTKeyCollection()
    private var keyAdded = false
    let keyID: JWKIdentifier
    let issuerID: String
    let bundleID: String
    let lifetime: Int64
    private var cached: (token: String, expires: Int64)?
    /// Tokens signed so far (for the tests).
    private(set) var signed = 0

    /// - Throws: when `privateKeyPEM` is not a P-256 private key in PEM.
    init(privateKeyPEM: String, keyID: String, issuerID: String, bundleID: String, lifetime: Duration) throws(StoreAPISettingsError) {
        do {
            key = try ES256PrivateKey(pem: privateKeyPEM)
        } catch {
            throw StoreAPISettingsError("the App Store in-app purchase key is not a P-256 private key in PEM (the .p8 file App Store Connect gives)")
        }
        let seconds = lifetime.components.seconds
        guard seconds >= 120, seconds <= 3600 else {
            throw StoreAPISettingsError("the App Store API token's lifetime must be 2 to 60 minutes (Apple refuses an exp more than 60 minutes after iat)")
        }
        self.keyID = JWKIdentifier(string: keyID)
        self.issuerID = issuerID
        self.bundleID = bundleID
        self.lifetime = seconds
    }

    /// The `Authorization` header's value at `now` (Unix seconds).
    func authorization(now: Int64) async throws(StoreAPIError) -> String {
        if let cached, cached.expires - 60 > now { return "Bearer \(cached.token)" }
        let claims = Claims(iss: issuerID, iat: now, exp: now + lifetime, aud: Self.audience, bid: bundleID)
        if !keyAdded {
            await keys.add(ecdsa: key, kid: keyID)
            keyAdded = true
        }
        let token: String
        do {
            token = try await keys.sign(claims, kid: keyID, header: ["typ": "JWT"])
        } catch {
            throw StoreAPIError(StoreCall(store: "app_store", name: "Generating JSON Web Tokens"), .unauthorized, "cannot sign the API token: \(error)")
        }
        cached = (token, now + lifetime)
        signed += 1
        return "Bearer \(token)"
    }

    /// The claims Apple reads, as whole seconds.
    struct Claims: JWTPayload {
        var iss: String
        var iat: Int64
        var exp: Int64
        var aud: String
        var bid: String

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
