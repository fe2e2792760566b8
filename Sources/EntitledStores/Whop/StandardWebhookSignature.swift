import Crypto
import Foundation

/// The Standard Webhooks signature (https://www.standardwebhooks.com), which Whop's webhooks use: headers
/// `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature` (space-separated `v1,<base64>`
/// entries), each an HMAC-SHA256 of `<id>.<timestamp>.<body>`. The key is the secret's bytes; a secret
/// written `whsec_<base64>` is the base64 after the prefix, as the specification's libraries read it.
public enum StandardWebhookSignature {
    public static let defaultTolerance: Int64 = 300
    /// The longest `webhook-signature` read, and the most entries compared (one per live secret: two
    /// while one rolls). Beyond these it is refused unread, so its cost stays bounded.
    public static let maximumHeaderBytes = 4096
    public static let maximumSignatures = 8

    /// Checks the three headers against `body` with each of `secrets`; returns the message id.
    @discardableResult
    public static func verify(
        id: String?, timestamp: String?, signature: String?, body: [UInt8], secrets: [String], now: Int64, tolerance: Int64 = defaultTolerance
    ) throws(NotificationRefusal) -> String {
        guard let id, !id.isEmpty, let timestamp, let signature, !signature.isEmpty else {
            throw NotificationRefusal(.badSignature, "webhook-id, webhook-timestamp or webhook-signature is missing")
        }
        guard let seconds = Int64(timestamp) else { throw NotificationRefusal(.badSignature, "webhook-timestamp is not a Unix time") }
        guard signature.utf8.count <= maximumHeaderBytes else {
            throw NotificationRefusal(.badSignature, "webhook-signature is longer than \(maximumHeaderBytes) bytes")
        }
        let entries = signature.split(separator: " ")
        guard entries.count <= maximumSignatures else {
            throw NotificationRefusal(.badSignature, "webhook-signature has more than \(maximumSignatures) entries")
        }
        let signed = Array("\(id).\(timestamp).".utf8) + body
        let given = entries.compactMap { entry -> [UInt8]? in
            let parts = entry.split(separator: ",", maxSplits: 1)
            guard parts.count == 2, parts[0] == "v1" else { return nil }
            return Data(base64Encoded: String(parts[1])).map(Array.init)
        }
        guard !given.isEmpty else { throw NotificationRefusal(.badSignature, "webhook-signature has no v1 signature") }
        // One HMAC over the body per secret, compared (in constant time) with every entry.
        let verified = secrets.contains { secret in
            let code = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: keyBytes(secret)))
            return given.contains { code == $0 }
        }
        guard verified else { throw NotificationRefusal(.badSignature, "webhook-signature does not match the body with the configured secret") }
        guard SignatureClock.isWithin(tolerance, of: now, seconds) else {
            throw NotificationRefusal(.staleTimestamp, "webhook-timestamp \(seconds) is more than \(tolerance) s from now (\(now))")
        }
        return id
    }

    /// The `webhook-signature` for `body` (for tests and tools).
    public static func signature(id: String, timestamp: Int64, body: [UInt8], secret: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array("\(id).\(timestamp).".utf8) + body, using: SymmetricKey(data: keyBytes(secret)))
        return "v1," + Data(code).base64EncodedString()
    }

    static func keyBytes(_ secret: String) -> [UInt8] {
        if secret.hasPrefix("whsec_"), let decoded = Data(base64Encoded: String(secret.dropFirst(6))) { return Array(decoded) }
        return Array(secret.utf8)
    }
}
