import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// An import overlapping the live notifications of the same purchases: a real `entitled-stores serve`
/// receiving signed notifications before and after `entitled-stores import` runs against the stand-ins.
/// Whatever the order, each purchase is one membership, and what either told is kept: an import of the
/// store's history must not take a membership back to a period a notification has moved it past.
// One test at a time: each runs entitled, entitled-stores and stand-ins, and the suites' tests all at once
// starved the rest of the full run (timing tests elsewhere ran out of time).
@Suite(.serialized) struct ImportOverlapTests {
    let harness: ImportHarness

    init() throws {
        harness = try ImportHarness()
    }

    static func milliseconds(_ time: String?) -> Int64? { time.flatMap(ProtocolTime.milliseconds) }

    @Test func appStoreNotificationsBeforeAndAfterAnImportMakeOneMembershipAndLoseNothing() async throws {
        let store = try AppleImportStore()
        harness.storeArguments = store.arguments
        let (stores, rootDirectory) = try AppleFixtures.receiver(trusting: store.fixtures.chain, entitled: harness.entitled)
        _ = rootDirectory
        func deliver(_ body: [UInt8]) throws -> String { try stores.post("/apple", body: body, headers: ["Content-Type": "application/json"]).body }
        let now = AppleFixtures.nowMilliseconds
        let users = ["5d0c6a4e-3b1f-4c2a-9e7d-000000000401", "5d0c6a4e-3b1f-4c2a-9e7d-000000000402", "5d0c6a4e-3b1f-4c2a-9e7d-000000000403"]
        // X renewed five times; the receiver, started lately, hears only of its newest renewal.
        var x = AppleImportStore.subscription("4000000100", periods: 6, lastExpires: now + 20 * .day, user: users[0])
        // Y bought lately: the receiver heard of the purchase.
        let y = AppleImportStore.subscription("4000000200", periods: 1, lastExpires: now + 25 * .day, user: users[1])
        // Z the receiver never heard of before the import.
        var z = AppleImportStore.subscription("4000000300", periods: 3, lastExpires: now + 10 * .day, user: users[2])
        try store.serve([.init(transactions: x, status: 1), .init(transactions: y, status: 1), .init(transactions: z, status: 1)])
        let renewedX = store.fixtures.notification("DID_RENEW", uuid: "x-1", signedDate: now - 60_000, environment: "Production", transaction: x[5])
        #expect(try deliver(renewedX) == "applied\n")
        let boughtY = store.fixtures.notification(
            "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "y-1", signedDate: now - 60_000, environment: "Production", transaction: y[0],
            renewal: ["autoRenewStatus": 1]
        )
        #expect(try deliver(boughtY) == "applied\n")

        let file = try harness.file("apple.txt", ["4000000100", "4000000200", "4000000300"])
        let run = try await harness.run(["--apple-transactions", file])
        #expect(run.status == 0, "\(run.output)")
        var membershipX = try harness.membership(original: "4000000100")
        // The older periods do not take it back: it is paid until its newest period's end.
        #expect(Self.milliseconds(membershipX.expiresAt) == now + 20 * .day)
        #expect(membershipX.isActive)
        #expect(membershipX.transactions.map(\.id).contains("4000000105"))
        // Its earlier periods are not renewals of it, and the report says so.
        #expect((run.line("app_store:4000000100")?["notes"] as? [String])?.contains { $0.hasPrefix("earlier periods not counted as renewals") } == true)
        #expect(run.status("app_store:4000000200") == "unchanged")
        #expect(try harness.membership(original: "4000000200").transactions.count == 1)
        #expect(try harness.membership(original: "4000000300").renewsCount == 2)

        // After the import: X and Z renew, Y's renewal is turned off.
        let later = AppleFixtures.nowMilliseconds
        for (transactions, uuid) in [(x, "x-2"), (z, "z-2")] {
            let last = transactions[transactions.count - 1]
            var next = last
            next["transactionId"] = String(Int64(last["transactionId"] as? String ?? "0")! + 1)
            next["purchaseDate"] = last["expiresDate"]
            next["expiresDate"] = (last["expiresDate"] as? Int64 ?? 0) + 30 * .day
            #expect(try deliver(store.fixtures.notification("DID_RENEW", uuid: uuid, signedDate: later, environment: "Production", transaction: next)) == "applied\n")
            if uuid == "x-2" { x.append(next) } else { z.append(next) }
        }
        let offY = store.fixtures.notification(
            "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "y-2", signedDate: later, environment: "Production", transaction: y[0],
            renewal: ["autoRenewStatus": 0]
        )
        #expect(try deliver(offY) == "applied\n")
        // Apple delivers an earlier one again: nothing.
        #expect(try deliver(renewedX) == "duplicate\n")
        membershipX = try harness.membership(original: "4000000100")
        #expect(Self.milliseconds(membershipX.expiresAt) == now + 50 * .day)
        let renewalsOfX = membershipX.renewsCount
        #expect(try harness.membership(original: "4000000300").renewsCount == 3)

        // The store tells the same now; importing again changes nothing.
        try store.serve([.init(transactions: x, status: 1), .init(transactions: y, status: 1, renewal: ["autoRenewStatus": 0]), .init(transactions: z, status: 1)])
        let trails = try users.map { try harness.history($0).count }
        let again = try await harness.run(["--apple-transactions", file, "--job", "again"])
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("imported 0, unchanged 3"), "\(again.output)")
        #expect(try users.map { try harness.history($0).count } == trails)
        membershipX = try harness.membership(original: "4000000100")
        #expect(Self.milliseconds(membershipX.expiresAt) == now + 50 * .day)
        #expect(membershipX.renewsCount == renewalsOfX)
        #expect(try harness.membership(original: "4000000200").willRenew == false)
        #expect(try harness.membership(original: "4000000300").renewsCount == 3)
        #expect(try harness.membershipCount() == 3)
    }

    @Test func stripeWebhooksBeforeAndAfterAnImportMakeOneMembershipAndLoseNothing() async throws {
        let store = try StripeImportStore()
        harness.storeArguments = store.arguments
        let stores = try RunningStores(entitled: "127.0.0.1:\(harness.entitled.port)", environment: ["ENTITLED_STORES_STRIPE_SECRET": StripeFixtures.secret])
        func deliver(_ body: [UInt8]) throws -> String { try stores.post("/stripe", body: body, headers: StripeFixtures.signed(body)).body }
        let now = StripeFixtures.now
        let day: Int64 = 86_400
        func subscription(_ id: String, user: String, periodEnd: Int64, invoice: String, cancelAtPeriodEnd: Bool = false) -> [String: Any] {
            StripeImportStore.subscription(
                id, customer: "cus_9", started: now - 40 * day, periodEnd: periodEnd, user: user, cancelAtPeriodEnd: cancelAtPeriodEnd, latestInvoice: invoice
            )
        }
        // The receiver heard of sub_o1's creation; of sub_o2 nothing.
        let created = StripeFixtures.subscriptionEvent(
            "evt_o1", type: "customer.subscription.created", created: now - 60, subscription: "sub_o1", periodEnd: now + 20 * day, user: "o_1", latestInvoice: "in_o1"
        )
        #expect(try deliver(created) == "applied\n")
        try store.serve([subscription("sub_o1", user: "o_1", periodEnd: now + 20 * day, invoice: "in_o1"), subscription("sub_o2", user: "o_2", periodEnd: now + 10 * day, invoice: "in_o2")])
        let file = try harness.file("stripe.txt", ["sub_o1", "sub_o2"])
        let run = try await harness.run(["--stripe-subscriptions", file])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.status("stripe:sub_o1") == "unchanged")
        #expect(run.status("stripe:sub_o2") == "imported")

        // After the import: sub_o1 renews, sub_o2 is set to cancel at its period's end.
        let later = StripeFixtures.now + 1
        #expect(try deliver(StripeFixtures.subscriptionEvent("evt_o2", created: later, subscription: "sub_o1", periodEnd: now + 50 * day, user: "o_1", latestInvoice: "in_o1b")) == "applied\n")
        #expect(
            try deliver(StripeFixtures.subscriptionEvent("evt_o3", created: later, subscription: "sub_o2", periodEnd: now + 10 * day, user: "o_2", cancelAtPeriodEnd: true, latestInvoice: "in_o2"))
                == "applied\n")
        #expect(try deliver(created) == "duplicate\n")
        try store.serve([
            subscription("sub_o1", user: "o_1", periodEnd: now + 50 * day, invoice: "in_o1b"),
            subscription("sub_o2", user: "o_2", periodEnd: now + 10 * day, invoice: "in_o2", cancelAtPeriodEnd: true),
        ])
        let trails = try ["o_1", "o_2"].map { try harness.history($0).count }
        let again = try await harness.run(["--stripe-subscriptions", file, "--job", "again"])
        #expect(again.output.contains("imported 0, unchanged 2"), "\(again.output)")
        #expect(try ["o_1", "o_2"].map { try harness.history($0).count } == trails)
        let first = try harness.membership(original: "sub_o1")
        #expect(first.renewsCount == 1)
        #expect(first.transactions.map(\.id) == ["in_o1", "in_o1b"])
        #expect(Self.milliseconds(first.expiresAt) == (now + 50 * day) * 1000)
        let second = try harness.membership(original: "sub_o2")
        #expect(second.status == "canceled")
        #expect(try harness.membershipCount() == 2)
    }
}
