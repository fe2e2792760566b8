import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// Whop's payment and refund webhooks, and API v1's membership names, through real `entitled` and
/// `entitled-stores` processes: a renewal announced only by its payment (`payment.succeeded`), a membership
/// deactivated (`membership.deactivated`) and a refund created (`refund.created`), in the shapes of Whop's
/// API v1 reference (https://docs.whop.com/api-reference/refunds/refund-updated for a refund and its payment).
@Suite struct WhopPaymentTests {
    let entitled: RunningEntitled
    let stores: RunningStores
    let client: EntitledConnection
    let now = Date()

    init() throws {
        entitled = try RunningEntitled()
        stores = try RunningStores(entitled: "127.0.0.1:\(entitled.port)", environment: ["ENTITLED_STORES_WHOP_SECRET": WhopNotificationTests.secret])
        client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port))
    }

    func iso(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }

    /// `seconds` from now, as Whop writes times.
    func at(_ seconds: Double) -> String { iso(now.addingTimeInterval(seconds)) }

    func deliver(_ type: String, _ data: [String: Any], at seconds: Double, id: String) throws -> String {
        let body = WhopNotificationTests.body(type, data: data, timestamp: at(seconds))
        let sent = Int64(Date().timeIntervalSince1970)
        let reply = try stores.post(
            "/whop", body: body,
            headers: [
                "webhook-id": id, "webhook-timestamp": "\(sent)",
                "webhook-signature": StandardWebhookSignature.signature(id: id, timestamp: sent, body: body, secret: WhopNotificationTests.secret),
            ]
        )
        #expect(reply.status == 200, "\(reply.body)")
        return reply.body
    }

    func membership() throws -> MembershipInfo {
        try #require(try client.send(.memberships(originalTransactionId: "mem_w1")).memberships?.first)
    }

    func milliseconds(_ text: String?) -> Int64? { text.flatMap(ProtocolTime.milliseconds) }

    @Test func aRenewalAnnouncedOnlyByItsPaymentMovesTheMembershipOn() throws {
        let firstEnd = at(30 * 86_400)
        #expect(try deliver("membership.activated", WhopNotificationTests.membership(periodEnd: firstEnd), at: -60, id: "msg_a") == "applied\n")
        let granted = try membership()
        let paidFrom = try #require(milliseconds(granted.transactions.first?.time))
        let end1 = try #require(milliseconds(granted.expiresAt))

        // The checkout's own payment, announced after the activation: not a renewal.
        let first: [String: Any] = [
            "id": "pay_1", "status": "paid", "billing_reason": "subscription_create", "paid_at": at(-60), "membership": ["id": "mem_w1", "status": "active"],
        ]
        let firstReply = try deliver("payment.succeeded", first, at: -55, id: "msg_p1")
        #expect(firstReply.hasPrefix("ignored: payment pay_1 pays no period after the membership's current one"), "\(firstReply)")
        #expect(try membership().renewsCount == 0)

        // The renewal's payment (API v1: no period end in it): one more period of the length paid last.
        let renewal: [String: Any] = [
            "id": "pay_2", "status": "paid", "billing_reason": "subscription_cycle", "paid_at": firstEnd, "membership": ["id": "mem_w1", "status": "active"],
        ]
        #expect(try deliver("payment.succeeded", renewal, at: -50, id: "msg_p2") == "applied\n")
        var current = try membership()
        let end2 = end1 + (end1 - paidFrom)
        #expect(milliseconds(current.expiresAt) == end2)
        #expect(current.renewsCount == 1)
        #expect(current.transactions.map(\.id) == ["mem_w1", "pay_2"])
        // The same payment announced again (another webhook id): nothing new.
        #expect(try deliver("payment.succeeded", renewal, at: -45, id: "msg_p2b") == "duplicate\n")

        // An older payload: the membership as an id, the plan's billing period in days.
        let legacy: [String: Any] = [
            "id": "pay_3", "status": "paid", "membership": "mem_w1", "paid_at": end2 / 1000, "plan": ["id": "plan_1", "plan_type": "renewal", "billing_period": 30],
        ]
        #expect(try deliver("payment.succeeded", legacy, at: -40, id: "msg_p3") == "applied\n")
        // From its own paid time (whole seconds), the plan's 30 days.
        let end3 = end2 / 1000 * 1000 + 30 * 86_400_000
        #expect(milliseconds(try membership().expiresAt) == end3)

        // The next renewal's charge fails, Whop retries it a day later and it goes through while the membership
        // stays valid: a renewal, until the retry's time plus the plan's period, that ends the issue.
        #expect(try deliver("payment.failed", ["id": "pay_4", "status": "open", "membership": ["id": "mem_w1"]], at: -30, id: "msg_f4") == "applied\n")
        #expect(try membership().renewState == "billing_issue")
        let retried: [String: Any] = [
            "id": "pay_4", "status": "paid", "billing_reason": "subscription_cycle", "paid_at": (end3 + 86_400_000) / 1000,
            "membership": ["id": "mem_w1", "status": "active"], "plan": ["id": "plan_1", "billing_period": 30],
        ]
        #expect(try deliver("payment.succeeded", retried, at: -20, id: "msg_p4") == "applied\n")
        current = try membership()
        #expect(milliseconds(current.expiresAt) == end3 + 31 * 86_400_000)
        #expect(current.renewState == "will_renew")
        #expect(current.renewsCount == 3)
        #expect(try client.send(.history(user: "user_whop_1")).history?.map(\.action) == ["renewal", "billing_issue", "renewal", "renewal", "grant"])
    }

    @Test func aDeactivatedMembershipEndsAndACreatedRefundRevokesAPaidOne() throws {
        let data = WhopNotificationTests.membership(periodEnd: at(30 * 86_400))
        #expect(try deliver("membership.activated", data, at: -60, id: "msg_d1") == "applied\n")
        #expect(try deliver("membership.deactivated", data, at: -50, id: "msg_d2") == "applied\n")
        #expect(try client.send(.check(user: "user_whop_1")).body["active"]?.boolValue == false)
        #expect(try membership().status == "expired")

        // Valid again with a new period; a refund of part of its payment leaves access, a full one ends it.
        #expect(try deliver("membership.activated", WhopNotificationTests.membership(periodEnd: at(60 * 86_400)), at: -40, id: "msg_d3") == "applied\n")
        #expect(try client.send(.check(user: "user_whop_1")).body["active"]?.boolValue == true)
        // The payment's refunded_amount counts every refund so far (Whop's payment object).
        let payment: [String: Any] = ["id": "pay_9", "total": 20.0, "billing_reason": "subscription_cycle", "membership": ["id": "mem_w1", "status": "active"]]
        let partlyRefunded = payment.merging(["refunded_amount": 5.0]) { $1 }
        let partial = try deliver("refund.created", ["id": "rf_1", "amount": 5.0, "status": "pending", "payment": partlyRefunded], at: -30, id: "msg_d4")
        #expect(partial.hasPrefix("ignored: the payment is refunded in part only"), "\(partial)")
        #expect(try client.send(.check(user: "user_whop_1")).body["active"]?.boolValue == true)
        // API v1's refund: its payment without a refunded amount; this refund alone returns all of it.
        #expect(try deliver("refund.created", ["id": "rf_2", "amount": 20.0, "status": "pending", "payment": payment], at: -20, id: "msg_d5") == "applied\n")
        #expect(try client.send(.check(user: "user_whop_1")).body["active"]?.boolValue == false)
        #expect(try membership().status == "revoked")
        #expect(try client.send(.history(user: "user_whop_1")).history?.map(\.action) == ["refund", "renewal", "expiration", "grant"])
    }

    /// A renewal charge fails and the membership goes invalid; Whop's retry goes through and
    /// `membership.activated` gives the new period. The retried payment's own `payment.succeeded` (API v1: the
    /// membership by id only, no period end) pays that same period, already applied: no second renewal.
    @Test func aPeriodRenewedByItsActivationIsNotRenewedAgainByItsPayment() throws {
        let firstPeriod = WhopNotificationTests.membership(periodEnd: at(30 * 86_400))
        #expect(try deliver("membership.activated", firstPeriod, at: -600, id: "msg_r1") == "applied\n")
        #expect(try deliver("payment.failed", ["id": "pay_r", "status": "open", "membership": ["id": "mem_w1"]], at: -500, id: "msg_r2") == "applied\n")
        #expect(try deliver("membership.deactivated", firstPeriod, at: -400, id: "msg_r3") == "applied\n")
        #expect(try client.send(.check(user: "user_whop_1")).body["active"]?.boolValue == false)
        let end2 = try #require(milliseconds(at(60 * 86_400)))
        #expect(try deliver("membership.activated", WhopNotificationTests.membership(periodEnd: at(60 * 86_400)), at: -300, id: "msg_r4") == "applied\n")
        #expect(milliseconds(try membership().expiresAt) == end2)

        let retried: [String: Any] = ["id": "pay_r", "status": "paid", "billing_reason": "subscription_cycle", "paid_at": at(-300), "membership": "mem_w1"]
        let reply = try deliver("payment.succeeded", retried, at: -250, id: "msg_r5")
        #expect(reply.hasPrefix("ignored: payment pay_r pays no period after the membership's current one"), "\(reply)")
        let current = try membership()
        #expect(milliseconds(current.expiresAt) == end2)
        #expect(current.renewsCount == 1)
        #expect(try client.send(.history(user: "user_whop_1")).history?.map(\.action) == ["renewal", "expiration", "billing_issue", "grant"])
    }

    /// Older payloads have no `billing_reason`: a renewal plan's payment made in the second half of the period
    /// pays until its own time plus the plan's period (not the current end plus a period), and a one-time
    /// plan's payment (an add-on) renews nothing.
    @Test func aPaymentWithoutABillingReasonPaysFromItsOwnTime() throws {
        #expect(try deliver("membership.activated", WhopNotificationTests.membership(periodEnd: at(30 * 86_400)), at: -60, id: "msg_o1") == "applied\n")
        let early: [String: Any] = [
            "id": "pay_o1", "status": "paid", "membership": "mem_w1", "paid_at": at(20 * 86_400),
            "plan": ["id": "plan_1", "plan_type": "renewal", "billing_period": 30],
        ]
        #expect(try deliver("payment.succeeded", early, at: -50, id: "msg_o2") == "applied\n")
        let end2 = try #require(milliseconds(at(20 * 86_400))) + 30 * 86_400_000
        #expect(milliseconds(try membership().expiresAt) == end2)

        let addOn: [String: Any] = [
            "id": "pay_o2", "status": "paid", "membership": "mem_w1", "paid_at": at(45 * 86_400),
            "plan": ["id": "plan_addon", "plan_type": "one_time", "billing_period": NSNull()],
        ]
        let reply = try deliver("payment.succeeded", addOn, at: -40, id: "msg_o3")
        #expect(reply.hasPrefix("ignored: payment pay_o2 pays no period after"), "\(reply)")
        let current = try membership()
        #expect(milliseconds(current.expiresAt) == end2)
        #expect(current.renewsCount == 1)
    }
}
