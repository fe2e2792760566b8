import Crypto
import EntitledTestSupport
import Foundation
import SwiftASN1
import X509

/// App Store Server Notifications V2 built as Apple builds them: JWS (ES256) with an `x5c` chain of a
/// test root, an intermediate carrying Apple's WWDR marker and a leaf carrying the receipt-signing marker.
struct AppleFixtures {
    static let bundleID = "com.example.app"

    struct Chain {
        var rootPEM: String
        var x5c: [String]
        var leafKey: P256.Signing.PrivateKey
    }

    /// A chain valid from an hour ago (or `validSince` seconds ago: notifications signed that long ago
    /// verify at their `signedDate`) for a day, with or without Apple's markers, or with a leaf that
    /// expired before now.
    static func chain(markers: Bool = true, leafExpired: Bool = false, validSince: TimeInterval = 3600) throws -> Chain {
        let now = Date()
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("Test Root CA - G3") }
        let intermediateName = try DistinguishedName { CommonName("Test Worldwide Developer Relations") }
        let leafName = try DistinguishedName { CommonName("Test StoreKit Signing") }
        let marker: ArraySlice<UInt8> = [0x05, 0x00]
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: now - validSince, notValidAfter: now + 86_400,
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey)
        )
        let intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: now - validSince,
            notValidAfter: now + 86_400, issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                if markers { Certificate.Extension(oid: [1, 2, 840, 113635, 100, 6, 2, 1], critical: false, value: marker) }
            },
            issuerPrivateKey: .init(rootKey)
        )
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: now - validSince,
            notValidAfter: leafExpired ? now - 1800 : now + 86_400, issuer: intermediateName, subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                if markers { Certificate.Extension(oid: [1, 2, 840, 113635, 100, 6, 11, 1], critical: false, value: marker) }
            },
            issuerPrivateKey: .init(intermediateKey)
        )
        func der(_ certificate: Certificate) throws -> String {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return Data(serializer.serializedBytes).base64EncodedString()
        }
        return Chain(rootPEM: try root.serializeAsPEM().pemString, x5c: [try der(leaf), try der(intermediate), try der(root)], leafKey: leafKey)
    }

    let chain: Chain

    /// An `entitled-stores` serving `/apple` with `chain`'s root as the trusted one, in front of
    /// `entitled`; the root's file lives in the returned directory, which must outlive the receiver.
    static func receiver(
        trusting chain: Chain, entitled: RunningEntitled, environment: [String: String] = [:], arguments: [String] = []
    ) throws -> (RunningStores, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let rootFile = directory.path + "/root.pem"
        try chain.rootPEM.write(toFile: rootFile, atomically: true, encoding: .utf8)
        let stores = try RunningStores(
            entitled: "127.0.0.1:\(entitled.port)", environment: environment,
            arguments: ["--apple-root-ca", rootFile, "--apple-bundle-id", bundleID] + arguments
        )
        return (stores, directory)
    }

    /// A JWS of `payload` signed by the chain's leaf.
    func sign(_ payload: [String: Any]) -> String {
        let header = try! JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": chain.x5c])
        let body = try! JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])
        let signingInput = Self.base64URL(header) + "." + Self.base64URL(body)
        let signature = try! chain.leafKey.signature(for: Data(signingInput.utf8)).rawRepresentation
        return signingInput + "." + Self.base64URL(signature)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static var nowMilliseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// The request body of a notification: `{"signedPayload": ...}`. Its app's fields go in `container`
    /// (`data`; `summary` for RENEWAL_EXTENSION/SUMMARY, `externalPurchaseToken` for EXTERNAL_PURCHASE_TOKEN),
    /// with `fields`.
    func notification(
        _ type: String, subtype: String? = nil, uuid: String, signedDate: Int64, bundleID: String = AppleFixtures.bundleID,
        environment: String = "Sandbox", transaction: [String: Any]? = nil, renewal: [String: Any]? = nil,
        container: String = "data", fields: [String: Any] = [:]
    ) -> [UInt8] {
        var data: [String: Any] = ["bundleId": bundleID, "environment": environment, "bundleVersion": "1.0"].merging(fields) { $1 }
        if let transaction { data["signedTransactionInfo"] = sign(transaction.merging(["signedDate": signedDate, "bundleId": bundleID]) { $1 }) }
        if let renewal { data["signedRenewalInfo"] = sign(renewal.merging(["signedDate": signedDate]) { $1 }) }
        var payload: [String: Any] = ["notificationType": type, "notificationUUID": uuid, "signedDate": signedDate, "version": "2.0", container: data]
        if let subtype { payload["subtype"] = subtype }
        return Array(try! JSONSerialization.data(withJSONObject: ["signedPayload": sign(payload)]))
    }

    /// A subscription transaction as `JWSTransactionDecodedPayload` has it.
    static func transaction(
        _ id: String, original: String, product: String = "premium.monthly", expires: Int64, token: String? = "0f4e2c1a-7d5b-4c1e-9a3f-2b6d8e0c4a91",
        environment: String = "Sandbox", offerType: Int? = nil
    ) -> [String: Any] {
        var transaction: [String: Any] = [
            "transactionId": id, "originalTransactionId": original, "productId": product, "purchaseDate": nowMilliseconds,
            "expiresDate": expires, "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED", "environment": environment,
            "storefront": "USA", "transactionReason": "PURCHASE",
        ]
        if let token { transaction["appAccountToken"] = token }
        if let offerType { transaction["offerType"] = offerType }
        return transaction
    }
}
