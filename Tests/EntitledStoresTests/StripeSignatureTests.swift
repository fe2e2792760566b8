import Testing

@testable import EntitledStores

/// Stripe's signature scheme: what verifies and what is refused, and why.
@Suite struct StripeSignatureTests {
    let body = Array(#"{"id":"evt_1","type":"customer.subscription.created"}"#.utf8)
    let secret = "whsec_test_secret"
    let now: Int64 = 1_790_000_000

    func refusal(_ header: String?, body: [UInt8]? = nil, secrets: [String]? = nil) -> NotificationRefusal? {
        do {
            try StripeSignature.verify(header: header, body: body ?? self.body, secrets: secrets ?? [secret], now: now)
            return nil
        } catch {
            return error
        }
    }

    @Test func aSignatureOfTheBodyWithTheSecretVerifies() {
        #expect(refusal(StripeSignature.header(body: body, secret: secret, timestamp: now)) == nil)
        // Within the tolerance on either side.
        #expect(refusal(StripeSignature.header(body: body, secret: secret, timestamp: now - 299)) == nil)
        #expect(refusal(StripeSignature.header(body: body, secret: secret, timestamp: now + 299)) == nil)
    }

    @Test func anyOfSeveralSignaturesAndAnyOfSeveralSecretsVerifies() {
        let other = StripeSignature.header(body: body, secret: "whsec_old", timestamp: now)
        let current = StripeSignature.header(body: body, secret: secret, timestamp: now)
        // Stripe rolling its secret: two v1 in one header.
        let both = other + "," + current.split(separator: ",")[1]
        #expect(refusal(both) == nil)
        // The receiver rolling its secret: two configured.
        #expect(refusal(other, secrets: [secret, "whsec_old"]) == nil)
        // A v0 and unknown schemes are skipped.
        #expect(refusal(current + ",v0=abcd,v9=zz") == nil)
    }

    @Test func aTamperedBodyAWrongSecretOrAMissingSignatureIsABadSignature() {
        let header = StripeSignature.header(body: body, secret: secret, timestamp: now)
        #expect(refusal(header, body: body + [0x20])?.kind == .badSignature)
        #expect(refusal(StripeSignature.header(body: body, secret: "whsec_other", timestamp: now))?.kind == .badSignature)
        #expect(refusal(nil)?.reason == "no Stripe-Signature header")
        #expect(refusal("v1=" + String(repeating: "0", count: 64))?.reason == "the Stripe-Signature header has no t=")
        #expect(refusal("t=\(now)")?.reason == "the Stripe-Signature header has no v1= signature")
        #expect(refusal("t=\(now),v1=not-hex")?.kind == .badSignature)
        // A v1= that is there but is not a signature is named as such, not as missing.
        for mangled in ["abc", "not-hex", String(repeating: "0", count: 62), String(repeating: "0", count: 66), ""] {
            #expect(refusal("t=\(now),v1=\(mangled)")?.reason == "the Stripe-Signature header has a malformed v1= signature (64 hex digits expected)", "v1=\(mangled)")
        }
        // The time is part of what is signed: another time with the same signature does not verify.
        let moved = header.replacingOccurrences(of: "t=\(now)", with: "t=\(now + 1)")
        #expect(refusal(moved)?.kind == .badSignature)
    }

    @Test func aSignatureOlderOrNewerThanFiveMinutesIsStale() {
        let old = refusal(StripeSignature.header(body: body, secret: secret, timestamp: now - 301))
        #expect(old?.kind == .staleTimestamp)
        #expect(old?.status == 400)
        #expect(refusal(StripeSignature.header(body: body, secret: secret, timestamp: now + 301))?.kind == .staleTimestamp)
    }

    @Test func eventsOfOneSecondAreOrderedByTheirIds() {
        let ids = ["evt_0AAA", "evt_1Zzz", "evt_AB", "evt_Zz9", "evt_bb", "evt_zz"]
        let breaks = ids.map(StripeReceiver.tieBreak)
        #expect(breaks == breaks.sorted())
        #expect(Set(breaks).count == ids.count)
        #expect(breaks.allSatisfy { (0..<1000).contains($0) })
    }
}
