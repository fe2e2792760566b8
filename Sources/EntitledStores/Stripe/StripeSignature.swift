import Crypto

/// Stripe's `Stripe-Signature` header: `t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, with
/// several `v1` while Stripe rolls the endpoint's secret, and several secrets here while the receiver's
/// configuration rolls it. (https://docs.stripe.com/webhooks#verify-manually)
public enum StripeSignature {
    /// The tolerance Stripe's own libraries use: a captured request replayed later is refused.
    public static let defaultTolerance: Int64 = 300
    /// The longest header read, and the most `v1` entries compared: Stripe sends one per live secret
    /// (two while it rolls one). Beyond these the header is refused unread, so its cost stays bounded.
    public static let maximumHeaderBytes = 4096
    public static let maximumSignatures = 8

    /// Checks `header` against `body` with each of `secrets` (the endpoint's `whsec_...` signing
    /// secrets), in constant time per comparison, and that its time is within `tolerance` seconds of
    /// `now` (Unix seconds).
    public static func verify(
        header: String?, body: [UInt8], secrets: [String], now: Int64, tolerance: Int64 = defaultTolerance
    ) throws(NotificationRefusal) {
        guard let header, !header.isEmpty else { throw NotificationRefusal(.badSignature, "no Stripe-Signature header") }
        guard header.utf8.count <= maximumHeaderBytes else {
            throw NotificationRefusal(.badSignature, "the Stripe-Signature header is longer than \(maximumHeaderBytes) bytes")
        }
        var timestamp: Int64?
        var signatures: [[UInt8]] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else { continue }
            let key = pair[0].trimmingSpaces
            let value = pair[1].trimmingSpaces
            if key == "t" {
                guard timestamp == nil else { throw NotificationRefusal(.badSignature, "the Stripe-Signature header has more than one t=") }
                guard let seconds = Int64(value) else { throw NotificationRefusal(.badSignature, "the Stripe-Signature time is not a Unix time") }
                timestamp = seconds
            }
            // v0 (test mode's old scheme) and unknown schemes are skipped, as Stripe's libraries do.
            if key == "v1" {
                // Refused, not skipped: a v1= Stripe could not have sent is a forged or mangled header, and
                // "has no v1= signature" would send whoever reads the log looking in the wrong place.
                guard let bytes = hexBytes(value), bytes.count == 32 else {
                    throw NotificationRefusal(
                        .badSignature, "the Stripe-Signature header has a malformed v1= signature (64 hex digits expected)"
                    )
                }
                guard signatures.count < maximumSignatures else {
                    throw NotificationRefusal(.badSignature, "the Stripe-Signature header has more than \(maximumSignatures) v1= signatures")
                }
                signatures.append(bytes)
            }
        }
        guard let timestamp else { throw NotificationRefusal(.badSignature, "the Stripe-Signature header has no t=") }
        guard !signatures.isEmpty else { throw NotificationRefusal(.badSignature, "the Stripe-Signature header has no v1= signature") }
        let signed = Array("\(timestamp).".utf8) + body
        // One HMAC over the body per secret, compared (in constant time) with every entry: the body's
        // cost does not grow with the entries a sender lists.
        let verified = secrets.contains { secret in
            let code = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Array(secret.utf8)))
            return signatures.contains { code == $0 }
        }
        guard verified else { throw NotificationRefusal(.badSignature, "the Stripe-Signature does not match the body with the configured signing secret") }
        // After the signature: an unsigned time says nothing.
        guard SignatureClock.isWithin(tolerance, of: now, timestamp) else {
            throw NotificationRefusal(.staleTimestamp, "the Stripe-Signature time \(timestamp) is more than \(tolerance) s from now (\(now))")
        }
    }

    /// The header Stripe would send for `body` signed with `secret` at `timestamp` (for tests and tools).
    public static func header(body: [UInt8], secret: String, timestamp: Int64) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array("\(timestamp).".utf8) + body, using: SymmetricKey(data: Array(secret.utf8)))
        return "t=\(timestamp),v1=" + code.map { byte in String(byte, radix: 16).leftPadded }.joined()
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0, !digits.isEmpty else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String { String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
}

extension String {
    fileprivate var leftPadded: String { count == 1 ? "0" + self : self }
}
