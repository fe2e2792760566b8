import EntitledTestSupport
import Foundation
import Testing

@testable import EntitledStores

/// The HTTP side every store API client shares (`StoreAPIClient`): 429s after their `Retry-After`, 5xx and
/// timeouts tried again, errors that name the store, the call and what it was about, and at most
/// `ConcurrencyLimit.width` calls in flight, against Fixtures/stripe_standin.py over real HTTP.
@Suite struct StoreAPIClientTests {
    let stripe: StoreStandIn

    init() throws {
        stripe = try StoreStandIn("stripe_standin")
        try stripe.set(["subscriptions": [["id": "sub_1", "object": "subscription", "status": "active", "customer": "cus_1", "created": 1_764_806_400]]])
    }

    /// Quick retries: a test waits for the stand-in's `Retry-After`, not for backoff.
    static let quick = RetryPolicy(
        attempts: 3, initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100), longestRetryAfter: .seconds(5), timeout: .seconds(5)
    )

    func api(_ policy: RetryPolicy = quick, concurrency: Int = 4) -> StripeAPI {
        StripeAPI(secretKey: "sk_test_standin", apiURL: stripe.url, policy: policy, concurrency: concurrency)
    }

    @Test func a429IsTriedAgainAfterTheRetryAfterItCarries() async throws {
        try stripe.failNext(1, with: 429, retryAfter: "1")
        // Timed on this side: the stand-in notes an arrival when its thread gets to it, which a busy machine
        // delays by half a second and more.
        let started = ContinuousClock.now
        let subscription = try await api().subscription("sub_1")
        let elapsed = ContinuousClock.now - started
        #expect(subscription["id"]?.stringValue == "sub_1")
        let traffic = try stripe.traffic()
        #expect(traffic.requests == 2)
        #expect(elapsed >= .milliseconds(950), "\(elapsed)")
    }

    @Test func aRetryAfterLongerThanThePolicyWaitsEndsTheCallAsRateLimited() async throws {
        try stripe.failNext(1, with: 429, retryAfter: "600")
        let error = try await #require(throws: StoreAPIError.self) { try await api().subscription("sub_1") }
        #expect(error.kind == .rateLimited)
        #expect(error.mayPassLater)
        #expect(error.message.contains("asked to wait"), "\(error)")
        #expect(try stripe.traffic().requests == 1)
    }

    @Test func aServerErrorIsTriedAgainAndTheCallThenSucceeds() async throws {
        try stripe.failNext(2, with: 500)
        let subscription = try await api().subscription("sub_1")
        #expect(subscription["status"]?.stringValue == "active")
        #expect(try stripe.traffic().requests == 3)
    }

    @Test func retriesRunningOutGiveAnErrorNamingTheStoreTheCallAndTheIdentifier() async throws {
        try stripe.failNext(10, with: 500)
        let error = try await #require(throws: StoreAPIError.self) { try await api().subscription("sub_1") }
        #expect(error.call == StoreCall(store: "stripe", name: "Retrieve a subscription", identifier: "sub_1"))
        #expect(error.kind == .unavailable)
        #expect(error.description.hasPrefix("stripe Retrieve a subscription (sub_1): "), "\(error)")
        #expect(error.description.contains("answered 500") && error.description.contains("An unknown error occurred"), "\(error)")
        #expect(error.description.contains("after 3 tries"), "\(error)")
        #expect(try stripe.traffic().requests == 3)
    }

    @Test func onceTriesOnceAndSays429() async throws {
        try stripe.failNext(1, with: 429, retryAfter: "1")
        let error = try await #require(throws: StoreAPIError.self) { try await api(.once).subscription("sub_1") }
        #expect(error.kind == .rateLimited)
        #expect(error.description.contains("answered 429"), "\(error)")
        #expect(try stripe.traffic().requests == 1)
    }

    // The timeout tests prove the try's timer ended the try, not the stand-in's giving up after 60 s, by what
    // came of it rather than by the time it took: in a full run of the suite, tests that block hold the
    // cooperative pool's threads (two on this machine), and a timed-out try resumed up to 54 s late (seen).
    // A hang the stand-in gave up would be a closed connection, not "did not answer within"; a stall it gave
    // up would be the first try's answer, one request, not two.
    @Test func aStoreThatDoesNotAnswerTimesOutAndIsTriedAgain() async throws {
        try stripe.failNext(5, with: "hang", hangSeconds: 60)
        let policy = RetryPolicy(attempts: 2, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(10), longestRetryAfter: .seconds(1), timeout: .seconds(2))
        let error = try await #require(throws: StoreAPIError.self) { try await api(policy).subscription("sub_1") }
        #expect(error.kind == .unavailable)
        #expect(error.message.contains("did not answer within"), "\(error)")
        #expect(try stripe.traffic().requests == 2)
    }

    @Test func aStoreThatStallsItsAnswersBodyTimesOut() async throws {
        // AsyncHTTPClient's own deadline ends with the answer's head; the body is timed by the client.
        try stripe.failNext(1, with: "stall", hangSeconds: 60)
        // A try's timeout of 2 s: the second try's answer comes within it even on a machine busy with the suite.
        let policy = RetryPolicy(attempts: 2, initialDelay: .milliseconds(10), maximumDelay: .milliseconds(10), longestRetryAfter: .seconds(1), timeout: .seconds(2))
        let subscription = try await api(policy).subscription("sub_1")
        #expect(subscription["id"]?.stringValue == "sub_1")
        #expect(try stripe.traffic().requests == 2)
    }

    @Test func noMoreCallsThanTheLimitAreInFlightAtOnce() async throws {
        try stripe.set(["delay": 0.3])
        let api = api(concurrency: 2)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { _ = try await api.subscription("sub_1") }
            }
            try await group.waitForAll()
        }
        let traffic = try stripe.traffic()
        #expect(traffic.requests == 8)
        #expect(traffic.maxInFlight == 2)
    }

    @Test func theConcurrencyLimitLetsWidthBodiesRunAndTheRestWaitInOrder() async throws {
        let limit = ConcurrencyLimit(width: 3)
        let meter = Meter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    await limit.run { () async -> Void in
                        await meter.enter()
                        try? await Task.sleep(for: .milliseconds(10))
                        await meter.leave()
                    }
                }
            }
        }
        #expect(await meter.most == 3)
        #expect(await meter.count == 20)
    }

    actor Meter {
        var current = 0
        var most = 0
        var count = 0
        func enter() {
            current += 1
            count += 1
            most = max(most, current)
        }
        func leave() { current -= 1 }
    }

    @Test func retryAfterIsReadAsEachStoreWritesIt() {
        let now = Date(timeIntervalSince1970: 1_764_806_400)
        #expect(RetryAfterFormat.standard.wait("30", now: now) == .seconds(30))
        #expect(RetryAfterFormat.standard.wait("Thu, 04 Dec 2025 00:00:10 GMT", now: now) == .seconds(10))
        #expect(RetryAfterFormat.standard.wait("soon", now: now) == nil)
        // Apple: a UNIX time in milliseconds.
        #expect(RetryAfterFormat.unixMilliseconds.wait("1764806401500", now: now) == .milliseconds(1500))
        #expect(RetryAfterFormat.unixMilliseconds.wait("1764806300000", now: now) == .zero)
        #expect(RetryAfterFormat.unixMilliseconds.wait("2", now: now) == .seconds(2))
    }

    @Test func theBackoffIsAtMostItsDoublingCap() {
        let policy = RetryPolicy(attempts: 8, initialDelay: .milliseconds(100), maximumDelay: .seconds(1), longestRetryAfter: .zero, timeout: .seconds(1))
        var random = SystemRandomNumberGenerator()
        for retry in 1...7 {
            let cap = min(Duration.seconds(1), .milliseconds(100 * (1 << (retry - 1))))
            for _ in 0..<50 {
                let wait = policy.backoff(beforeRetry: retry, using: &random)
                #expect(wait >= .zero && wait <= cap)
            }
        }
    }
}
