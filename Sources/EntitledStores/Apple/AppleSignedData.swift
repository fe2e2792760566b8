import Crypto
import EntitledClient
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Verifies Apple's signed data (a JWS, ES256, with an `x5c` chain), as Apple's App Store Server Library
/// does (its ChainVerifier): the chain of exactly three certificates must lead to a configured root, the
/// intermediate must carry Apple's WWDR marker (1.2.840.113635.100.6.2.1) and the leaf the receipt-signing
/// marker (1.2.840.113635.100.6.11.1), each certificate must be valid at the payload's `signedDate`, and
/// the leaf's P-256 key must verify the signature. The root in `x5c` is not trusted: only the configured one.
public struct AppleSignedData: Sendable {
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

    let roots: [Certificate]

    /// Trusts the certificates of `pem` (Apple's root, "Apple Root CA - G3", in production).
    public init(rootCertificatesPEM pem: String) throws(NotificationRefusal) {
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: pem)
        } catch {
            throw NotificationRefusal(.untrustedChain, "the root certificate file holds no PEM certificate")
        }
        var roots: [Certificate] = []
        for document in documents {
            guard let root = try? Certificate(derEncoded: document.derBytes) else {
                throw NotificationRefusal(.untrustedChain, "the root certificate file holds a PEM block that is no certificate")
            }
            roots.append(root)
        }
        guard !roots.isEmpty else { throw NotificationRefusal(.untrustedChain, "the root certificate file holds no certificate") }
        self.roots = roots
    }

    /// The payload of `jws` once verified. `what` names it in refusals (`signedPayload`, ...).
    public func verify(_ jws: String, what: String, now: Date = Date()) async throws(NotificationRefusal) -> JSONValue {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
            let signatureBytes = Base64URL.decode(parts[2])
        else { throw NotificationRefusal(.malformed, "\(what) is not a JWS (three base64url parts)") }
        guard let header = JSONValue(strictUTF8: headerBytes),
            let payload = JSONValue(strictUTF8: payloadBytes)
        else { throw NotificationRefusal(.malformed, "\(what)'s header or payload is not JSON") }
        guard header["alg"]?.stringValue == "ES256" else { throw NotificationRefusal(.badSignature, "\(what) is not signed with ES256") }
        guard let chain = header["x5c"]?.arrayValue?.compactMap(\.stringValue), chain.count == 3 else {
            throw NotificationRefusal(.untrustedChain, "\(what) has no x5c chain of three certificates")
        }
        guard let leafDER = Data(base64Encoded: chain[0]), let intermediateDER = Data(base64Encoded: chain[1]),
            let leaf = try? Certificate(derEncoded: Array(leafDER)), let intermediate = try? Certificate(derEncoded: Array(intermediateDER))
        else { throw NotificationRefusal(.untrustedChain, "\(what)'s x5c certificates cannot be read") }
        // Valid when it was signed, as Apple's library checks offline: a notification delivered again
        // after its leaf expired is still genuine. The date is the sender's, unverified until the chain
        // is: checked against sane bounds before the verifier sees it (a date past year 9999 ended the
        // process in the certificate library).
        let signedAt = try Self.signingDate(payload["signedDate"], what: what, now: now)
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(fixedExpiryValidationTime: signedAt)
            AppleMarkerPolicy()
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        guard case .validCertificate = result else {
            throw NotificationRefusal(.untrustedChain, "\(what)'s certificate chain does not verify up to the configured Apple root with Apple's markers at its signedDate")
        }
        guard let key = P256.Signing.PublicKey(leaf.publicKey), let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            key.isValidSignature(signature, for: Array("\(parts[0]).\(parts[1])".utf8))
        else { throw NotificationRefusal(.badSignature, "\(what)'s signature does not verify with its leaf certificate") }
        return payload
    }
}

extension AppleSignedData {
    /// The earliest signing date taken: the App Store Server Notifications began in 2019; 2008 leaves room.
    static let earliestSigningDate = Date(timeIntervalSince1970: 1_199_145_600)
    /// How far in the future a signing date may lie: clocks differ, but not by days.
    static let signingClockSkew: TimeInterval = 86_400

    /// `signedDate` (milliseconds) as a date between 2008 and a day from `now`; `now` when absent.
    static func signingDate(_ value: JSONValue?, what: String, now: Date) throws(NotificationRefusal) -> Date {
        guard let value, !value.isNull else { return now }
        guard let milliseconds = value.intValue else { throw NotificationRefusal(.malformed, "\(what)'s signedDate is not a whole number of milliseconds") }
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        guard date >= earliestSigningDate, date <= now.addingTimeInterval(signingClockSkew) else {
            throw NotificationRefusal(.malformed, "\(what)'s signedDate \(milliseconds) is not a time between 2008 and a day from now")
        }
        return date
    }
}

/// Apple's markers on the intermediate and the leaf (the App Store Server Library's AppStoreOIDPolicy).
struct AppleMarkerPolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        guard chain.count == 3 else { return .failsToMeetPolicy(reason: "the chain has \(chain.count) certificates, not 3") }
        guard chain[1].extensions[oid: AppleSignedData.intermediateMarker] != nil else {
            return .failsToMeetPolicy(reason: "the intermediate lacks Apple's WWDR marker")
        }
        guard chain[0].extensions[oid: AppleSignedData.leafMarker] != nil else {
            return .failsToMeetPolicy(reason: "the leaf lacks Apple's receipt-signing marker")
        }
        return .meetsPolicy
    }
}

/// Base64url without padding (RFC 7515).
enum Base64URL {
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map(Array.init)
    }

    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
