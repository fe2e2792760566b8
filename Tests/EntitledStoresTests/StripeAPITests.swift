import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

@testable import EntitledStores

/// `StripeAPI` against the stand-in written from Stripe's API reference (Fixtures/stripe_standin.py).
@Suite struct StripeAPITests {
    let stripe: StoreStandIn
    let api: StripeAPI

    init() throws {
        stripe = try StoreStandIn("stripe_standin")
        api = StripeAPI(secretKey: "sk_test_standin", apiURL: stripe.url, policy: StoreAPIClientTests.quick)
    }

    static func subscription(_ id: String, status: String = "active", created: Int64, customer: String = "cus_1") -> [String: Any] {
        ["id": id, "object": "subscription", "status": status, "customer": customer, "created": created, "metadata": ["app_user_id": "user_\(id)"]]
    }

    @Test func subscriptionsOfEveryStatusArePagedToTheEndNewestFirst() async throws {
        let created = StripeFixtures.now - 86_400
        try stripe.set([
            "subscriptions": (0..<5).map { Self.subscription("sub_\($0)", status: $0 == 2 ? "canceled" : "active", created: created + Int64($0)) }
        ])
        var ids: [String] = []
        var pages = 0
        for try await page in api.subscriptions(limit: 2) {
            pages += 1
            ids += page.data.compactMap { $0["id"]?.stringValue }
        }
        #expect(pages == 3)
        #expect(ids == ["sub_4", "sub_3", "sub_2", "sub_1", "sub_0"])
        // Asked for active ones only, the canceled one is left out; asked for canceled ones, it alone.
        #expect(try await api.subscriptionsPage(status: "active").data.count == 4)
        #expect(try await api.subscriptionsPage(status: "canceled").data.compactMap { $0["id"]?.stringValue } == ["sub_2"])
        // A stopped import resumes after the last id it saw.
        #expect(try await api.subscriptionsPage(limit: 2, startingAfter: "sub_3").data.compactMap { $0["id"]?.stringValue } == ["sub_2", "sub_1"])
    }

    @Test func theCustomerIsExpandedWhenAsked() async throws {
        try stripe.set([
            "subscriptions": [Self.subscription("sub_e", created: StripeFixtures.now)],
            "customers": ["cus_1": ["id": "cus_1", "object": "customer", "email": "someone@example.com"]],
        ])
        #expect(try await api.subscriptionsPage().data.first?["customer"]?.stringValue == "cus_1")
        #expect(try await api.subscriptionsPage(expandCustomer: true).data.first?["customer"]?["email"]?.stringValue == "someone@example.com")
        #expect(try await api.subscription("sub_e", expandCustomer: true)["customer"]?["id"]?.stringValue == "cus_1")
    }

    @Test func aSubscriptionIsRetrievedAndOneStripeDoesNotKnowIsNotFound() async throws {
        try stripe.set(["subscriptions": [Self.subscription("sub_r", created: StripeFixtures.now)]])
        #expect(try await api.subscription("sub_r")["metadata"]?["app_user_id"]?.stringValue == "user_sub_r")
        let error = try await #require(throws: StoreAPIError.self) { try await api.subscription("sub_missing") }
        #expect(error.kind == .notFound)
        #expect(error.storeCode == "resource_missing")
        #expect(error.message == "answered 404: No such subscription: 'sub_missing' (invalid_request_error, resource_missing, param id)")
    }

    @Test func eventsAreListedWithinStripes30DaysByTypeAndCreation() async throws {
        let now = StripeFixtures.now
        func event(_ id: String, _ type: String, daysAgo: Int64) -> [String: Any] {
            ["id": id, "object": "event", "type": type, "created": now - daysAgo * 86_400, "data": ["object": ["id": "sub_1"]]]
        }
        try stripe.set([
            "events": [
                event("evt_old", "customer.subscription.updated", daysAgo: 40), event("evt_10", "customer.subscription.updated", daysAgo: 10),
                event("evt_5", "charge.refunded", daysAgo: 5), event("evt_1", "customer.subscription.deleted", daysAgo: 1),
            ]
        ])
        var ids: [String] = []
        for try await page in api.events(limit: 1) { ids += page.data.compactMap { $0["id"]?.stringValue } }
        #expect(ids == ["evt_1", "evt_5", "evt_10"])
        let lastWeek = try await api.eventsPage(createdSince: Date().addingTimeInterval(-7 * 86_400))
        #expect(lastWeek.data.compactMap { $0["id"]?.stringValue } == ["evt_1", "evt_5"])
        let subscriptions = try await api.eventsPage(types: ["customer.subscription.updated", "customer.subscription.deleted"])
        #expect(subscriptions.data.compactMap { $0["id"]?.stringValue } == ["evt_1", "evt_10"])
        #expect(StripeAPI.eventsWindow == .seconds(30 * 86_400))
    }

    @Test func eventsAreListedOldestFirstAcrossPagesWithEndingBefore() async throws {
        let now = StripeFixtures.now
        func event(_ id: String, _ type: String, secondsAgo: Int64) -> [String: Any] {
            ["id": id, "object": "event", "type": type, "created": now - secondsAgo, "data": ["object": ["id": "sub_1"]]]
        }
        var events = [event("evt_old", "customer.subscription.updated", secondsAgo: 40 * 86_400)]
        for index in 0..<7 {
            let type = index == 3 ? "invoice.paid" : "customer.subscription.updated"
            events.append(event("evt_\(index)", type, secondsAgo: Int64(700 - index * 100)))
        }
        try stripe.set(["events": events])
        for limit in [1, 2, 3, 100] {
            var ids: [String] = []
            var pages = 0
            for try await page in api.eventsOldestFirst(createdSince: Date().addingTimeInterval(-86_400), types: ["customer.subscription.updated"], limit: limit) {
                pages += 1
                ids += page.data.compactMap { $0["id"]?.stringValue }
            }
            #expect(ids == ["evt_0", "evt_1", "evt_2", "evt_4", "evt_5", "evt_6"], "limit \(limit)")
            #expect(pages == (6 + limit - 1) / limit, "limit \(limit)")
        }
        var none = 0
        for try await page in api.eventsOldestFirst(createdSince: Date(), types: ["charge.refunded"]) { none += page.data.count }
        #expect(none == 0)
    }

    @Test func theInvoiceAPaymentIntentPaidIsFound() async throws {
        try stripe.set(["payments": ["pi_1": "in_1"]])
        #expect(try await api.invoice(paidBy: "pi_1") == "in_1")
        #expect(try await api.invoice(paidBy: "pi_other") == nil)
    }

    @Test func aKeyStripeRefusesIsUnauthorized() async throws {
        let error = try await #require(throws: StoreAPIError.self) {
            try await StripeAPI(secretKey: "sk_test_revoked", apiURL: stripe.url, policy: .once).subscriptionsPage()
        }
        #expect(error.kind == .unauthorized)
        #expect(error.message.contains("Invalid API Key provided"), "\(error)")
    }
}
