import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// Mutated and hand-made hostile requests to every route of a real `entitled-stores` (Apple, Stripe and
/// Whop configured, Google not), for a bounded number of requests from a fixed seed: each is answered
/// with a status, the process stays up, and a genuine notification still applies afterwards.
@Suite struct ReceiverFuzzTests {
    static let whopSecret = "whsec_" + Data("whop-fuzz-secret-0123456789".utf8).base64EncodedString()

    @Test func everyMutatedOrHostileRequestIsAnsweredAndTheReceiverStaysUp() throws {
        let chain = try AppleFixtures.chain()
        let apple = AppleFixtures(chain: chain)
        let entitled = try RunningEntitled()
        let (stores, rootDirectory) = try AppleFixtures.receiver(
            trusting: chain, entitled: entitled,
            environment: ["ENTITLED_STORES_STRIPE_SECRET": StripeFixtures.secret, "ENTITLED_STORES_WHOP_SECRET": Self.whopSecret]
        )
        defer { withExtendedLifetime(rootDirectory) {} }
        var random = SeededRandom(seed: 2026)

        // Genuine requests, the seeds of the mutations.
        let now = StripeFixtures.now
        let stripeBody = StripeFixtures.subscriptionEvent("evt_seed", created: now, periodEnd: now + 86_400)
        let whopBody = WhopNotificationTests.body("membership.went_valid", data: WhopNotificationTests.membership(periodEnd: "2099-01-01T00:00:00Z"), timestamp: "2026-01-01T00:00:00Z")
        let appleBody = apple.notification(
            "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "n-seed", signedDate: AppleFixtures.nowMilliseconds,
            transaction: AppleFixtures.transaction("3000000001", original: "3000000001", expires: AppleFixtures.nowMilliseconds + 86_400_000)
        )
        func whopHeaders(_ body: [UInt8], timestamp: Int64 = now) -> [String: String] {
            [
                "webhook-id": "msg_seed", "webhook-timestamp": "\(timestamp)",
                "webhook-signature": StandardWebhookSignature.signature(id: "msg_seed", timestamp: timestamp, body: body, secret: Self.whopSecret),
            ]
        }
        let seeds: [(path: String, body: [UInt8], headers: [String: String])] = [
            ("/stripe", stripeBody, StripeFixtures.signed(stripeBody)),
            ("/whop", whopBody, whopHeaders(whopBody)),
            ("/apple", appleBody, ["Content-Type": "application/json"]),
            ("/google", Array(#"{"message":{"data":"e30=","messageId":"1"},"subscription":"s"}"#.utf8), ["Authorization": "Bearer x.y.z"]),
        ]

        // Hand-made: the numbers and shapes that ended or stalled receivers before.
        var hostile: [(String, [UInt8], [String: String])] = []
        for number in ["9223372036854775807", "-9223372036854775808", "1e400", "-1e20", "253402300800000", "0.5", "\"x\"", "null", "[]", "{}"] {
            for field in ["created", "current_period_end", "renewal_period_end", "timestamp", "signedDate", "expiresDate", "eventTimeMillis"] {
                let stripe = Array(String(decoding: stripeBody, as: UTF8.self).replacingOccurrences(of: "\"\(field)\":\(now)", with: "\"\(field)\":\(number)").utf8)
                hostile.append(("/stripe", stripe, StripeFixtures.signed(stripe)))
                var membership = WhopNotificationTests.membership(periodEnd: nil)
                membership[field] = number
                let whop = WhopNotificationTests.body("membership.went_valid", data: membership, timestamp: number)
                hostile.append(("/whop", whop, whopHeaders(whop)))
            }
            hostile.append(("/stripe", stripeBody, ["Stripe-Signature": "t=\(number),v1=00"]))
            hostile.append(("/whop", whopBody, ["webhook-id": "m", "webhook-timestamp": number, "webhook-signature": "v1,AAAA"]))
        }

        var answered = 0
        let budget = 600
        for attempt in 0..<budget {
            let (path, body, headers): (String, [UInt8], [String: String])
            if attempt < hostile.count {
                (path, body, headers) = hostile[attempt]
            } else {
                let seed = seeds[Int(random.next() % UInt64(seeds.count))]
                (path, body, headers) = (seed.path, Self.mutate(seed.body, &random), Self.mutate(seed.headers, &random))
            }
            let reply = try stores.post(path, body: body, headers: headers)
            #expect((200...599).contains(reply.status), "\(path) attempt \(attempt): status \(reply.status)")
            answered += 1
            if attempt % 100 == 99 {
                #expect(try stores.get("/health").status == 200, "the receiver stopped answering after attempt \(attempt)")
            }
        }
        #expect(answered == budget)
        for path in ["/health", "/metrics", "/nowhere", "/stripe/../apple"] {
            let reply = try stores.get(path)
            #expect((200...599).contains(reply.status), "\(path): \(reply.status)")
        }
        // Still applying genuine notifications.
        let genuine = StripeFixtures.subscriptionEvent("evt_after", created: now + 1, periodEnd: now + 2 * 86_400)
        let applied = try stores.post("/stripe", body: genuine, headers: StripeFixtures.signed(genuine))
        #expect(applied.status == 200, "\(applied.body)")
    }

    /// Flips, drops, repeats or replaces a few bytes, or cuts the body.
    static func mutate(_ body: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        var bytes = body
        guard !bytes.isEmpty else { return bytes }
        for _ in 0..<(1 + random.next() % 4) {
            let position = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 6 {
            case 0: bytes[position] ^= UInt8(truncatingIfNeeded: 1 << (random.next() % 8))
            case 1: bytes.remove(at: position)
            case 2: bytes.insert(contentsOf: Array("9999999999999999999999".utf8), at: position)
            case 3: bytes[position] = [0x00, 0xFF, 0x22, 0x5C, 0x7B, 0x5D][Int(random.next() % 6)]
            case 4: bytes = Array(bytes[..<position])
            default: bytes.insert(contentsOf: bytes[position..<min(bytes.count, position + 64)], at: position)
            }
            if bytes.isEmpty { break }
        }
        return bytes
    }

    /// Sometimes drops a header, repeats it, or garbles its value (keeping it a valid header line).
    static func mutate(_ headers: [String: String], _ random: inout SeededRandom) -> [String: String] {
        var headers = headers
        guard let name = headers.keys.sorted().randomElement(using: &random) else { return headers }
        switch random.next() % 4 {
        case 0: headers[name] = nil
        case 1: headers[name] = String(repeating: headers[name] ?? "", count: 1 + Int(random.next() % 40))
        case 2: headers[name] = (headers[name] ?? "") + ",v1=" + String(repeating: "ab", count: 32) + ",t=-1"
        default: break
        }
        return headers
    }
}
