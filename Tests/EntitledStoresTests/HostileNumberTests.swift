import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// Untrusted numbers and oversized signature headers sent to a real `entitled-stores`: each is refused with
/// a 400 that names the field, the process stays up (`GET /health` answers after every one), and nothing
/// is applied. Each of these requests ended the process before the numbers were range-checked.
@Suite struct HostileNumberTests {
    static let whopSecret = "whsec_" + Data("whop-hostile-secret-0123456789".utf8).base64EncodedString()
    let entitled: RunningEntitled
    let stores: RunningStores
    let client: EntitledConnection
    let apple: AppleFixtures
    private let rootDirectory: TemporaryDirectory

    init() throws {
        let chain = try AppleFixtures.chain()
        apple = AppleFixtures(chain: chain)
        entitled = try RunningEntitled()
        (stores, rootDirectory) = try AppleFixtures.receiver(
            trusting: chain, entitled: entitled,
            environment: ["ENTITLED_STORES_STRIPE_SECRET": StripeFixtures.secret, "ENTITLED_STORES_WHOP_SECRET": Self.whopSecret]
        )
        client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port))
    }

    /// The reply, after checking that the process still answers.
    func refused(_ reply: HTTPReply, naming text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(reply.status == 400, "\(reply.status) \(reply.body)", sourceLocation: sourceLocation)
        #expect(reply.body.contains(text), "\(reply.body)", sourceLocation: sourceLocation)
        #expect(try stores.get("/health").status == 200, "the receiver did not answer after: \(reply.body)", sourceLocation: sourceLocation)
    }

    @Test func stripeTimesOutsideTheCalendarAreRefusedAndTheReceiverStaysUp() throws {
        let body = StripeFixtures.subscriptionEvent("evt_1", created: StripeFixtures.now, periodEnd: StripeFixtures.now + 86_400)
        let lowestTime = try stores.post("/stripe", body: body, headers: StripeFixtures.signed(body, at: .min))
        try refused(lowestTime, naming: "Stripe-Signature")

        let farCreated = StripeFixtures.subscriptionEvent("evt_2", created: 9_223_372_036_854_775, periodEnd: StripeFixtures.now + 86_400)
        try refused(try stores.post("/stripe", body: farCreated, headers: StripeFixtures.signed(farCreated)), naming: "created")

        let farEnd = StripeFixtures.subscriptionEvent("evt_3", created: StripeFixtures.now, periodEnd: .max)
        try refused(try stores.post("/stripe", body: farEnd, headers: StripeFixtures.signed(farEnd)), naming: "current_period_end")
        #expect(try client.send(.memberships(user: "user_1")).memberships?.isEmpty == true)
    }

    @Test func aStripeSignatureHeaderWithThousandsOfEntriesIsRefusedUnread() throws {
        let body = StripeFixtures.subscriptionEvent("evt_1", created: StripeFixtures.now, periodEnd: StripeFixtures.now + 86_400)
        let genuine = StripeFixtures.signed(body)["Stripe-Signature"]!
        // 10,000 entries (680 KB) are refused by the HTTP server's header limit, 100 (6.8 KB) by the receiver's.
        let entries = Array(repeating: "v1=" + String(repeating: "ab", count: 32), count: 10_000).joined(separator: ",")
        let flooded = try stores.post("/stripe", body: body, headers: ["Stripe-Signature": genuine + "," + entries])
        #expect(flooded.status == 400 || flooded.status == 431, "\(flooded.status) \(flooded.body)")
        #expect(try stores.get("/health").status == 200)
        let hundred = Array(repeating: "v1=" + String(repeating: "ab", count: 32), count: 100).joined(separator: ",")
        let long = try stores.post("/stripe", body: body, headers: ["Stripe-Signature": genuine + "," + hundred])
        try refused(long, naming: "longer than \(StripeSignature.maximumHeaderBytes) bytes")
        // Within the length, the number of entries is capped too.
        let many = Array(repeating: "v1=" + String(repeating: "ab", count: 32), count: StripeSignature.maximumSignatures).joined(separator: ",")
        try refused(try stores.post("/stripe", body: body, headers: ["Stripe-Signature": genuine + "," + many]), naming: "more than \(StripeSignature.maximumSignatures)")
        // A genuine header with a stale second entry still verifies (Stripe rolling its secret).
        let rolling = try stores.post("/stripe", body: body, headers: ["Stripe-Signature": genuine + ",v1=" + String(repeating: "00", count: 32)])
        #expect(rolling.status == 200, "\(rolling.body)")
    }

    @Test func whopTimesOutsideTheCalendarAreRefusedAndTheReceiverStaysUp() throws {
        func deliver(_ body: [UInt8], at timestamp: Int64) throws -> HTTPReply {
            try stores.post(
                "/whop", body: body,
                headers: [
                    "webhook-id": "msg_1", "webhook-timestamp": "\(timestamp)",
                    "webhook-signature": StandardWebhookSignature.signature(id: "msg_1", timestamp: timestamp, body: body, secret: Self.whopSecret),
                ]
            )
        }
        let valid = WhopNotificationTests.body("membership.went_valid", data: WhopNotificationTests.membership(periodEnd: "2099-01-01T00:00:00Z"), timestamp: "2026-01-01T00:00:00Z")
        let lowest = try deliver(valid, at: .min)
        #expect(lowest.status == 400, "\(lowest.body)")
        #expect(try stores.get("/health").status == 200)

        var membership = WhopNotificationTests.membership(periodEnd: nil)
        membership["renewal_period_end"] = Int64.max
        let farEnd = WhopNotificationTests.body("membership.went_valid", data: membership, timestamp: "2026-01-01T00:00:00Z")
        try refused(try deliver(farEnd, at: Int64(Date().timeIntervalSince1970)), naming: "renewal_period_end")

        let farStamp = WhopNotificationTests.body("membership.went_valid", data: WhopNotificationTests.membership(periodEnd: "2099-01-01T00:00:00Z"), timestamp: "99999999999999")
        try refused(try deliver(farStamp, at: Int64(Date().timeIntervalSince1970)), naming: "timestamp")
        #expect(try client.send(.memberships(user: "user_whop_1")).memberships?.isEmpty == true)
    }

    @Test func anAppleSigningDatePastYear9999IsRefusedBeforeTheCertificatesAreChecked() throws {
        for signedDate in [Int64(253_402_300_800_000), -1, Int64.max] {
            let body = apple.notification(
                "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "n-\(signedDate)", signedDate: signedDate,
                transaction: AppleFixtures.transaction("2000000001", original: "2000000001", expires: AppleFixtures.nowMilliseconds + 86_400_000)
            )
            try refused(try stores.post("/apple", body: body, headers: ["Content-Type": "application/json"]), naming: "signedDate")
        }
        // A number beyond any integer, as JSON allows.
        let huge = Array(#"{"signedPayload":"\#(apple.sign(["notificationType": "TEST", "notificationUUID": "n-x", "signedDate": -1e20, "data": ["bundleId": AppleFixtures.bundleID]]))"}"#.utf8)
        try refused(try stores.post("/apple", body: huge, headers: ["Content-Type": "application/json"]), naming: "signedDate")
        let farExpiry = apple.notification(
            "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "n-far", signedDate: AppleFixtures.nowMilliseconds,
            transaction: AppleFixtures.transaction("2000000002", original: "2000000002", expires: .max)
        )
        try refused(try stores.post("/apple", body: farExpiry, headers: ["Content-Type": "application/json"]), naming: "expiresDate")
    }
}
