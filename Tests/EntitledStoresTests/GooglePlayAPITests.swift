import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

@testable import EntitledStores

/// `GooglePlayAPI` against the stand-in for Google's OAuth and Play Developer API endpoints
/// (Fixtures/google_standin.py).
@Suite struct GooglePlayAPITests {
    static let quick = RetryPolicy(
        attempts: 3, initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100), longestRetryAfter: .seconds(5), timeout: .seconds(5)
    )
    let google: StoreStandIn
    let account: GoogleServiceAccount

    init() throws {
        google = try StoreStandIn("google_standin")
        let key: [String: Any] = [
            "type": "service_account", "private_key": try GoogleNotificationTests.fixtureKey("service-account").pkcs8PEMRepresentation,
            "client_email": "play-reader@example-project.iam.gserviceaccount.com", "token_uri": google.url + "/token",
        ]
        account = try GoogleServiceAccount(json: String(decoding: try JSONSerialization.data(withJSONObject: key), as: UTF8.self))
    }

    func api(_ policy: RetryPolicy = quick, concurrency: Int = 4) -> GooglePlayAPI {
        GooglePlayAPI(packageName: GoogleNotificationTests.package, serviceAccount: account, apiURL: google.url, policy: policy, concurrency: concurrency)
    }

    @Test func purchasesAreReadWithOneOAuthTokenForConcurrentCalls() async throws {
        try google.set([
            "subscriptions": ["token-1": GoogleNotificationTests.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.1", expiry: "2099-01-01T00:00:00Z")],
            "products": ["token-p": ["kind": "androidpublisher#productPurchase", "purchaseState": 0, "orderId": "GPA.2", "acknowledgementState": 1]],
        ])
        let api = api()
        let states = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<6 {
                group.addTask {
                    index % 2 == 0
                        ? try await api.subscription(purchaseToken: "token-1")["subscriptionState"]?.stringValue ?? "?"
                        : try await api.product("lifetime_pro", purchaseToken: "token-p")["orderId"]?.stringValue ?? "?"
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(states.sorted() == ["GPA.2", "GPA.2", "GPA.2", "SUBSCRIPTION_STATE_ACTIVE", "SUBSCRIPTION_STATE_ACTIVE", "SUBSCRIPTION_STATE_ACTIVE"])
        #expect(try google.tokenRequests().count == 1)
        #expect(await api.tokensFetched == 1)
    }

    @Test func aPurchaseGoogleDoesNotKnowIsNotFound() async throws {
        let error = try await #require(throws: StoreAPIError.self) { try await api().subscription(purchaseToken: "token-nobody") }
        #expect(error.kind == .notFound)
        #expect(error.call == StoreCall(store: "google_play", name: "purchases.subscriptionsv2.get", identifier: "token-nobody"))
        #expect(error.message.contains("The purchase token was not found."), "\(error)")
    }

    @Test func anAcknowledgementIsMadeOnceAndARepeatIsNoFailure() async throws {
        try google.set(["products": ["token-a": ["kind": "androidpublisher#productPurchase", "purchaseState": 0, "orderId": "GPA.3", "acknowledgementState": 0]]])
        let api = api()
        try await api.acknowledge(.product, productID: "lifetime_pro", purchaseToken: "token-a")
        try await api.acknowledge(.product, productID: "lifetime_pro", purchaseToken: "token-a")
        #expect(try google.state()["acknowledged"] as? Int == 1)
        #expect(try await api.product("lifetime_pro", purchaseToken: "token-a")["acknowledgementState"]?.intValue == 1)
    }

    @Test func voidedPurchasesArePagedToTheEndOldestFirst() async throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var voided: [[String: Any]] = []
        for index in 0..<5 {
            let voidedAt: Int64 = now - Int64(5 - index) * 86_400_000
            voided.append([
                "kind": "androidpublisher#voidedPurchase", "purchaseToken": "token-v\(index)", "orderId": "GPA.9-\(index)",
                "purchaseTimeMillis": String(now - 20 * 86_400_000), "voidedTimeMillis": String(voidedAt), "voidedSource": 0, "voidedReason": 1,
                "subscription": index % 2 == 1,
            ])
        }
        try google.set(["voided": voided])
        let api = api()
        var tokens: [String] = []
        var pages = 0
        for try await page in api.voidedPurchases(from: Date().addingTimeInterval(-29 * 86_400), maxResults: 2) {
            pages += 1
            tokens += page.voidedPurchases.map(\.purchaseToken)
        }
        #expect(pages == 3)
        #expect(tokens == (0..<5).map { "token-v\($0)" })
        let products = try await api.voidedPurchasesPage(includeSubscriptions: false)
        #expect(products.voidedPurchases.map(\.purchaseToken) == ["token-v0", "token-v2", "token-v4"])
        #expect(products.voidedPurchases.first?.voidedTimeMillis == now - 5 * 86_400_000)
        #expect(products.voidedPurchases.first?.voidedReason == 1)
        #expect(products.next == nil)
    }

    @Test func aVoidedPurchasesStartOlderThan30DaysIsRefused() async throws {
        #expect(GooglePlayAPI.voidedPurchasesWindow == .seconds(30 * 86_400))
        let error = try await #require(throws: StoreAPIError.self) {
            try await api().voidedPurchasesPage(from: Date().addingTimeInterval(-31 * 86_400))
        }
        #expect(error.kind == .refused)
        #expect(error.storeCode == "INVALID_ARGUMENT")
        #expect(error.message.contains("startTime cannot be older than 30 days"), "\(error)")
    }

    @Test func aQuota429IsTriedAgainAfterItsRetryAfter() async throws {
        try google.set(["subscriptions": ["token-1": GoogleNotificationTests.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.1", expiry: "2099-01-01T00:00:00Z")]])
        try google.failNext(1, with: 429, retryAfter: "1")
        // Timed on this side: the stand-in notes an arrival when its thread gets to it, late on a busy machine.
        let started = ContinuousClock.now
        #expect(try await api().subscription(purchaseToken: "token-1")["latestOrderId"]?.stringValue == "GPA.1")
        let elapsed = ContinuousClock.now - started
        let traffic = try google.traffic()
        #expect(traffic.requests == 2)
        #expect(elapsed >= .milliseconds(950), "\(elapsed)")
    }
}
