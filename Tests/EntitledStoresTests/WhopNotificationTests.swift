import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// Whop's webhooks (Standard Webhooks signatures) through real `entitled` and `entitled-stores` processes.
@Suite struct WhopNotificationTests {
    static let secret = "whsec_" + Data("whop-test-secret-0123456789".utf8).base64EncodedString()
    let entitled: RunningEntitled
    let stores: RunningStores
    let client: EntitledConnection

    init() throws {
        entitled = try RunningEntitled()
        stores = try RunningStores(entitled: "127.0.0.1:\(entitled.port)", environment: ["ENTITLED_STORES_WHOP_SECRET": Self.secret])
        client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port))
    }

    static func body(_ type: String, data: [String: Any], timestamp: String) -> [UInt8] {
        Array(try! JSONSerialization.data(withJSONObject: ["id": "evt_x", "api_version": "v1", "type": type, "timestamp": timestamp, "data": data], options: [.sortedKeys]))
    }

    static func membership(periodEnd: String?, user: String = "user_whop_1", metadata: [String: String] = [:]) -> [String: Any] {
        var membership: [String: Any] = [
            "id": "mem_w1", "status": "active", "user": ["id": user, "username": "someone"], "product": ["id": "prod_whop_pro", "title": "Pro"],
            "plan": ["id": "plan_1"], "cancel_at_period_end": false, "metadata": metadata,
        ]
        membership["renewal_period_end"] = periodEnd
        return membership
    }

    func deliver(_ body: [UInt8], id: String, secret: String = WhopNotificationTests.secret, at timestamp: Int64 = Int64(Date().timeIntervalSince1970)) throws -> HTTPReply {
        try stores.post(
            "/whop", body: body,
            headers: [
                "webhook-id": id, "webhook-timestamp": "\(timestamp)",
                "webhook-signature": StandardWebhookSignature.signature(id: id, timestamp: timestamp, body: body, secret: secret),
            ]
        )
    }

    @Test func aWhopMembershipGoesValidRenewsGoesInvalidAndIsRefunded() throws {
        let valid = Self.body("membership.went_valid", data: Self.membership(periodEnd: "2099-01-01T00:00:00Z", metadata: ["app_user_id": "app_user_7"]), timestamp: "2026-01-01T00:00:00Z")
        #expect(try deliver(valid, id: "msg_1").body == "applied\n")
        var membership = try #require(try client.send(.memberships(user: "app_user_7")).memberships?.first)
        #expect(membership.productId == "prod_whop_pro")
        #expect(membership.source == "whop")
        #expect(membership.expiresAt == "2099-01-01T00:00:00Z")
        #expect(try deliver(valid, id: "msg_1").body == "duplicate\n")

        let renewed = Self.body("membership.went_valid", data: Self.membership(periodEnd: "2099-02-01T00:00:00Z", metadata: ["app_user_id": "app_user_7"]), timestamp: "2026-01-02T00:00:00Z")
        #expect(try deliver(renewed, id: "msg_2").body == "applied\n")
        membership = try #require(try client.send(.memberships(user: "app_user_7")).memberships?.first)
        #expect(membership.renewsCount == 1)

        // A renewal payment fails, then a retry succeeds (valid again, same period): billing issue, recovered.
        let failed = Self.body("payment.failed", data: ["id": "pay_f", "status": "failed", "membership_id": "mem_w1"], timestamp: "2026-01-02T06:00:00Z")
        #expect(try deliver(failed, id: "msg_f1").body == "applied\n")
        #expect(try client.send(.memberships(user: "app_user_7")).memberships?.first?.renewState == "billing_issue")
        // An older event delivered late changes nothing.
        let late = Self.body("membership.went_invalid", data: Self.membership(periodEnd: "2099-02-01T00:00:00Z", metadata: ["app_user_id": "app_user_7"]), timestamp: "2026-01-01T12:00:00Z")
        #expect(try deliver(late, id: "msg_late").body.hasPrefix("ignored"))
        #expect(try client.send(.check(user: "app_user_7")).body["active"]?.boolValue == true)
        let recovered = Self.body("membership.went_valid", data: Self.membership(periodEnd: "2099-02-01T00:00:00Z", metadata: ["app_user_id": "app_user_7"]), timestamp: "2026-01-02T12:00:00Z")
        #expect(try deliver(recovered, id: "msg_f2").body == "applied\n")
        #expect(try client.send(.memberships(user: "app_user_7")).memberships?.first?.renewState == "will_renew")

        let invalid = Self.body("membership.went_invalid", data: Self.membership(periodEnd: "2099-02-01T00:00:00Z", metadata: ["app_user_id": "app_user_7"]), timestamp: "2026-01-03T00:00:00Z")
        #expect(try deliver(invalid, id: "msg_3").body == "applied\n")
        #expect(try client.send(.check(user: "app_user_7")).body["active"]?.boolValue == false)

        // Valid again (a new period), then the payment is refunded.
        let again = Self.body("membership.activated", data: Self.membership(periodEnd: "2099-03-01T00:00:00Z", metadata: ["app_user_id": "app_user_7"]), timestamp: "2026-01-04T00:00:00Z")
        #expect(try deliver(again, id: "msg_4").body == "applied\n")
        #expect(try client.send(.check(user: "app_user_7")).body["active"]?.boolValue == true)
        let refund = Self.body("payment.refunded", data: ["id": "pay_1", "status": "refunded", "membership": ["id": "mem_w1"]], timestamp: "2026-01-05T00:00:00Z")
        #expect(try deliver(refund, id: "msg_5").body == "applied\n")
        #expect(try client.send(.check(user: "app_user_7")).body["active"]?.boolValue == false)
        #expect(
            try client.send(.history(user: "app_user_7")).history?.map(\.action)
                == ["refund", "renewal", "expiration", "billing_recovered", "billing_issue", "renewal", "grant"]
        )
    }

    @Test func aMembershipWithoutTheMetadataKeyBelongsToTheWhopUserAndForgedOnesAreRefused() throws {
        let valid = Self.body("membership.went_valid", data: Self.membership(periodEnd: nil, user: "user_whop_9"), timestamp: "2026-01-01T00:00:00Z")
        let tampered = valid + Array(" ".utf8)
        let now = Int64(Date().timeIntervalSince1970)
        var forged = try stores.post("/whop", body: tampered, headers: [
            "webhook-id": "msg_f", "webhook-timestamp": "\(now)",
            "webhook-signature": StandardWebhookSignature.signature(id: "msg_f", timestamp: now, body: valid, secret: Self.secret),
        ])
        #expect(forged.status == 400)
        #expect(forged.body == "webhook-signature does not match the body with the configured secret\n")
        forged = try deliver(valid, id: "msg_w", secret: "whsec_" + Data("another".utf8).base64EncodedString())
        #expect(forged.status == 400)
        forged = try deliver(valid, id: "msg_s", at: now - 3600)
        #expect(forged.status == 400)
        #expect(forged.body.hasPrefix("webhook-timestamp"))
        #expect(try stores.post("/whop", body: valid).status == 400)
        #expect(try client.send(.memberships(user: "user_whop_9")).memberships == [])
        // Signed properly: a lifetime membership of the Whop user.
        #expect(try deliver(valid, id: "msg_ok").body == "applied\n")
        let membership = try #require(try client.send(.memberships(user: "user_whop_9")).memberships?.first)
        #expect(membership.expiresAt == nil)
        #expect(membership.isActive)
    }

    @Test func anUnreachableEntitledAnswers503AndWhopsRetryAppliesOnce() throws {
        let valid = Self.body("membership.went_valid", data: Self.membership(periodEnd: "2099-01-01T00:00:00Z", user: "user_whop_u"), timestamp: "2026-01-01T00:00:00Z")
        entitled.kill()
        #expect(try deliver(valid, id: "msg_u").status == 503)
        try entitled.restart()
        let retried = try stores.retryingWhileUnavailable { try deliver(valid, id: "msg_u") }
        #expect(retried.body == "applied\n")
        #expect(try deliver(valid, id: "msg_u").body == "duplicate\n")
        let client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port))
        #expect(try client.send(.memberships(user: "user_whop_u")).memberships?.count == 1)
    }

    /// Refunds count by the payment: two refunds of 50 of a payment of 100 each return a part, and the second
    /// makes the whole (the payment's cumulative `refunded_amount`); a payment whose `substatus` is `refunded`
    /// is refunded in full whatever this refund's amount; and a refund of a part whose payload does not say
    /// what was refunded before is answered `unmatched`, not ignored.
    @Test func refundsThatAddUpToTheWholePaymentEndItsAccess() throws {
        let valid = Self.body("membership.activated", data: Self.membership(periodEnd: "2099-01-01T00:00:00Z", user: "user_whop_r"), timestamp: "2026-01-01T00:00:00Z")
        #expect(try deliver(valid, id: "msg_r1").body == "applied\n")
        func refund(_ id: String, amount: Double, payment: [String: Any]) -> [UInt8] {
            Self.body("refund.created", data: ["id": id, "amount": amount, "status": "succeeded", "payment": payment], timestamp: "2026-01-02T00:00:00Z")
        }
        let payment: [String: Any] = ["id": "pay_r", "total": 100.0, "membership": ["id": "mem_w1", "status": "active"]]
        let first = try deliver(refund("rf_1", amount: 50, payment: payment.merging(["refunded_amount": 50.0]) { $1 }), id: "msg_r2").body
        #expect(first.hasPrefix("ignored: the payment is refunded in part only"), "\(first)")
        #expect(try client.send(.check(user: "user_whop_r")).body["active"]?.boolValue == true)
        #expect(try deliver(refund("rf_2", amount: 50, payment: payment.merging(["refunded_amount": 100.0]) { $1 }), id: "msg_r3").body == "applied\n")
        #expect(try client.send(.check(user: "user_whop_r")).body["active"]?.boolValue == false)
        #expect(try client.send(.memberships(user: "user_whop_r")).memberships?.first?.status == "revoked")

        var other = Self.membership(periodEnd: "2099-01-01T00:00:00Z", user: "user_whop_s")
        other["id"] = "mem_w2"
        #expect(try deliver(Self.body("membership.activated", data: other, timestamp: "2026-01-01T00:00:00Z"), id: "msg_s1").body == "applied\n")
        let otherPayment: [String: Any] = ["id": "pay_s", "total": 100.0, "membership": ["id": "mem_w2", "status": "active"]]
        let undecided = try deliver(refund("rf_3", amount: 50, payment: otherPayment), id: "msg_s2")
        #expect(undecided.status == 200)
        #expect(undecided.body.hasPrefix("unmatched: refund rf_3 returns 5000 of payment pay_s's 10000 cents"), "\(undecided.body)")
        #expect(try client.send(.check(user: "user_whop_s")).body["active"]?.boolValue == true)
        let whole = otherPayment.merging(["substatus": "refunded"]) { $1 }
        #expect(try deliver(refund("rf_4", amount: 50, payment: whole), id: "msg_s3").body == "applied\n")
        #expect(try client.send(.check(user: "user_whop_s")).body["active"]?.boolValue == false)
    }
}
