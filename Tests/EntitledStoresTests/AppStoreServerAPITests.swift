import Crypto
import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

@testable import EntitledStores

/// `AppStoreServerAPI` against two stand-ins of the App Store Server API (Fixtures/appstore_standin.py),
/// production and sandbox, serving transactions and notifications signed by AppleFixtures' test chain.
@Suite struct AppStoreServerAPITests {
    static let keyID = "2X9R4HXF34"
    static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    static let quick = RetryPolicy(
        attempts: 3, initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100), longestRetryAfter: .seconds(5), timeout: .seconds(5)
    )
    let production: StoreStandIn
    let sandbox: StoreStandIn
    let fixtures: AppleFixtures
    let key = P256.Signing.PrivateKey()

    init() throws {
        production = try StoreStandIn.appStore("Production", publicKeyPEM: key.publicKey.pemRepresentation, keyID: Self.keyID, issuerID: Self.issuerID)
        sandbox = try StoreStandIn.appStore("Sandbox", publicKeyPEM: key.publicKey.pemRepresentation, keyID: Self.keyID, issuerID: Self.issuerID)
        fixtures = AppleFixtures(chain: try AppleFixtures.chain())
    }

    func api(key: P256.Signing.PrivateKey? = nil, sandbox: Bool = true, policy: RetryPolicy = quick) throws -> AppStoreServerAPI {
        try AppStoreServerAPI(
            settings: .init(
                privateKeyPEM: (key ?? self.key).pemRepresentation, keyID: Self.keyID, issuerID: Self.issuerID, bundleID: AppleFixtures.bundleID,
                rootCertificatesPEM: fixtures.chain.rootPEM, productionURL: production.url, sandboxURL: sandbox ? self.sandbox.url : nil
            ),
            policy: policy
        )
    }

    /// A transaction as Apple signs it (`JWSTransactionDecodedPayload`).
    func transaction(_ id: String, original: String = "1000", environment: String = "Production", bundleID: String = AppleFixtures.bundleID, by signer: AppleFixtures? = nil) -> String {
        let payload = AppleFixtures.transaction(id, original: original, expires: AppleFixtures.nowMilliseconds + 86_400_000, environment: environment)
        return (signer ?? fixtures).sign(payload.merging(["signedDate": AppleFixtures.nowMilliseconds, "bundleId": bundleID]) { $1 })
    }

    func statuses(_ original: String, environment: String = "Production") -> [[String: Any]] {
        let renewal = fixtures.sign([
            "originalTransactionId": original, "autoRenewProductId": "premium.monthly", "autoRenewStatus": 1, "environment": environment,
            "signedDate": AppleFixtures.nowMilliseconds,
        ])
        return [[
            "subscriptionGroupIdentifier": "21000001",
            "lastTransactions": [["originalTransactionId": original, "status": 1, "signedTransactionInfo": transaction(original + "3", original: original, environment: environment), "signedRenewalInfo": renewal]],
        ]]
    }

    @Test func subscriptionStatusesComeVerifiedAndDecoded() async throws {
        try production.set(["statuses": ["1000": statuses("1000")]])
        let answer = try await api().subscriptionStatuses(transactionID: "1000")
        #expect(answer.environment == .production)
        #expect(answer.groups.map(\.subscriptionGroupIdentifier) == ["21000001"])
        let last = try #require(answer.groups.first?.lastTransactions.first)
        #expect(last.originalTransactionID == "1000")
        #expect(last.status == 1)
        #expect(last.transaction["transactionId"]?.stringValue == "10003")
        #expect(last.renewal?["autoRenewStatus"]?.intValue == 1)
        #expect(try sandbox.traffic().requests == 0)
    }

    @Test func aTransactionProductionDoesNotKnowIsLookedUpInTheSandbox() async throws {
        try production.set(["page_size": 2])
        try sandbox.set(["statuses": ["2000": statuses("2000", environment: "Sandbox")], "page_size": 2])
        try sandbox.set(["histories": ["2000": (0..<3).map { transaction("200\($0)", original: "2000", environment: "Sandbox") }]])
        let api = try api()
        #expect(try await api.subscriptionStatuses(transactionID: "2000").environment == .sandbox)
        let first = try await api.transactionHistoryPage(transactionID: "2000")
        #expect(first.environment == .sandbox)
        #expect(first.next == AppStoreServerAPI.HistoryPosition(revision: "rev-2", environment: .sandbox))
        // The next page is the sandbox's: production is not asked again.
        let second = try await api.transactionHistoryPage(transactionID: "2000", from: first.next)
        #expect(second.transactions.map { $0["transactionId"]?.stringValue } == ["2002"])
        #expect(second.next == nil)
        #expect(try production.traffic().requests == 2)
        #expect(try sandbox.traffic().requests == 3)
    }

    @Test func aTransactionNeitherEnvironmentKnowsIsNotFound() async throws {
        let error = try await #require(throws: StoreAPIError.self) { try await api().subscriptionStatuses(transactionID: "3000") }
        #expect(error.kind == .notFound)
        #expect(error.storeCode == "4040010")
        #expect(error.call == StoreCall(store: "app_store", name: "Get All Subscription Statuses", identifier: "3000"))
        #expect(error.message.contains("Transaction id not found. (errorCode 4040010)"), "\(error)")
        // Without a sandbox URL, production's answer stands.
        _ = try await #require(throws: StoreAPIError.self) { try await api(sandbox: false).transactionHistoryPage(transactionID: "3000") }
        #expect(try sandbox.traffic().requests == 1)
    }

    @Test func theTransactionHistoryIsPagedOldestFirstToTheEnd() async throws {
        let ids = (0..<45).map { String(5000 + $0) }
        try production.set(["histories": ["5000": ids.map { transaction($0, original: "5000") }]])
        let api = try api()
        var seen: [String] = []
        var pages = 0
        for try await page in api.transactionHistory(transactionID: "5000") {
            pages += 1
            seen += page.transactions.compactMap { $0["transactionId"]?.stringValue }
        }
        #expect(pages == 3)
        #expect(seen == ids)
        // A stopped import resumes where its last page said.
        let first = try await api.transactionHistoryPage(transactionID: "5000")
        let resumed = try await api.transactionHistoryPage(transactionID: "5000", from: first.next)
        #expect(resumed.transactions.first?["transactionId"]?.stringValue == "5020")
    }

    /// `count` notifications of the last minutes, one a minute (the test chain is valid from an hour ago).
    func notifications(_ count: Int) throws -> [[String: Any]] {
        let now = AppleFixtures.nowMilliseconds
        return try (0..<count).map { index in
            let date = now - Int64(count - index) * 60_000
            let original = index % 2 == 0 ? "7000" : "7001"
            let body = fixtures.notification(
                "DID_RENEW", uuid: "uuid-\(index)", signedDate: date, environment: "Production",
                transaction: AppleFixtures.transaction("7\(index)", original: original, expires: now + 86_400_000, environment: "Production")
            )
            let signedPayload = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])["signedPayload"]
            return [
                "signedPayload": signedPayload as Any, "date": date, "transactionId": original,
                "sendAttempts": [["attemptDate": date, "sendAttemptResult": index == 3 ? "TIMED_OUT" : "SUCCESS"]],
            ]
        }
    }

    @Test func theNotificationHistoryIsPagedWithItsPaginationToken() async throws {
        try production.set(["notifications": try notifications(25), "page_size": 10])
        let api = try api()
        let start = Date().addingTimeInterval(-7 * 86_400)
        var uuids: [String] = []
        var pages = 0
        for try await page in api.notificationHistory(from: start, to: Date()) {
            pages += 1
            for item in page.notifications {
                uuids.append(item.payload["notificationUUID"]?.stringValue ?? "?")
                #expect(item.transaction?["bundleId"]?.stringValue == AppleFixtures.bundleID)
                #expect(!item.signedPayload.isEmpty)
            }
        }
        #expect(pages == 3)
        #expect(uuids == (0..<25).map { "uuid-\($0)" })
        let failures = try await api.notificationHistoryPage(from: start, to: Date(), onlyFailures: true)
        #expect(failures.notifications.map { $0.sendAttempts.first?.result } == ["TIMED_OUT"])
        let one = try await api.notificationHistoryPage(from: start, to: Date(), transactionID: "7001")
        #expect(one.notifications.count == 10)
        #expect(one.next != nil)
    }

    @Test func aNotificationHistoryStartOlderThanAppleKeepsIsRefused() async throws {
        #expect(AppStoreServerAPI.notificationHistoryWindow(.production) == .seconds(180 * 86_400))
        #expect(AppStoreServerAPI.notificationHistoryWindow(.sandbox) == .seconds(30 * 86_400))
        let api = try api()
        let error = try await #require(throws: StoreAPIError.self) {
            try await api.notificationHistoryPage(from: Date().addingTimeInterval(-181 * 86_400), to: Date())
        }
        #expect(error.kind == .refused)
        #expect(error.storeCode == "4000012")
        _ = try await api.notificationHistoryPage(from: Date().addingTimeInterval(-179 * 86_400), to: Date())
        // The sandbox keeps 30 days.
        let sandboxError = try await #require(throws: StoreAPIError.self) {
            try await api.notificationHistoryPage(from: Date().addingTimeInterval(-31 * 86_400), to: Date(), environment: .sandbox)
        }
        #expect(sandboxError.storeCode == "4000012")
        #expect(try await api.notificationHistoryPage(from: Date().addingTimeInterval(-29 * 86_400), to: Date(), environment: .sandbox).hasMore == false)
    }

    @Test func theTokenIsAppleFormedAndOneServesManyCalls() async throws {
        try production.set(["statuses": ["1000": statuses("1000")]])
        let api = try api()
        for _ in 0..<5 { _ = try await api.subscriptionStatuses(transactionID: "1000") }
        let tokens = try #require(try production.state()["tokens"] as? [String])
        #expect(tokens.count == 1)
        #expect(await api.tokensSigned == 1)
        let parts = try #require(tokens.first?.split(separator: "."))
        let header = try Self.object(String(parts[0]))
        let claims = try Self.object(String(parts[1]))
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == Self.keyID && header["typ"] as? String == "JWT")
        #expect(claims["aud"] as? String == "appstoreconnect-v1" && claims["bid"] as? String == AppleFixtures.bundleID && claims["iss"] as? String == Self.issuerID)
        #expect((claims["exp"] as? Int ?? 0) - (claims["iat"] as? Int ?? 0) == 300)
    }

    @Test func aTokenIsSignedAnewShortlyBeforeItExpires() async throws {
        let api = try api()
        let now = Int64(Date().timeIntervalSince1970)
        let first = try await api.token.authorization(now: now)
        #expect(try await api.token.authorization(now: now + 200) == first)
        let renewed = try await api.token.authorization(now: now + 241)
        #expect(renewed != first)
        #expect(await api.tokensSigned == 2)
    }

    @Test func anExpiredTokenOrOneOfAnotherKeyIsRefused() async throws {
        try production.set(["statuses": ["1000": statuses("1000")]])
        // A token signed an hour ago has expired.
        let expired = try await api().token.authorization(now: Int64(Date().timeIntervalSince1970) - 3600)
        let reply = try HTTPReply.exchange(port: production.port, method: "GET", path: "/inApps/v1/subscriptions/1000", body: [], headers: ["Authorization": expired])
        #expect(reply.status == 401)
        #expect(try production.state()["last_refusal"] as? String == "expired")
        // A token whose exp is more than an hour after its iat is refused however fresh; the client makes none.
        let now = Int(Date().timeIntervalSince1970)
        let long = try handMadeToken(["iss": Self.issuerID, "iat": now, "exp": now + 3601, "aud": "appstoreconnect-v1", "bid": AppleFixtures.bundleID])
        #expect(try HTTPReply.exchange(port: production.port, method: "GET", path: "/inApps/v1/subscriptions/1000", body: [], headers: ["Authorization": long]).status == 401)
        #expect(try production.state()["last_refusal"] as? String == "exp is more than 60 minutes after iat")
        #expect(throws: StoreAPISettingsError.self) {
            _ = try AppStoreServerAPI(settings: .init(privateKeyPEM: key.pemRepresentation, keyID: Self.keyID, issuerID: Self.issuerID, bundleID: AppleFixtures.bundleID, rootCertificatesPEM: fixtures.chain.rootPEM, tokenLifetime: .seconds(3601)))
        }
        // Another key: 401, a setting to fix.
        let error = try await #require(throws: StoreAPIError.self) { try await api(key: P256.Signing.PrivateKey()).subscriptionStatuses(transactionID: "1000") }
        #expect(error.kind == .unauthorized)
        #expect(try production.state()["last_refusal"] as? String == "signature does not verify with the configured key")
    }

    /// The JSON object a JWT's base64url part holds.
    static func object(_ part: String) throws -> [String: Any] {
        let data = try #require(Data(base64Encoded: part.paddedBase64))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// A JWT of `claims` signed with the test's key, made by hand.
    func handMadeToken(_ claims: [String: Any]) throws -> String {
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "kid": Self.keyID, "typ": "JWT"])
        let input = AppleFixtures.base64URL(header) + "." + AppleFixtures.base64URL(try JSONSerialization.data(withJSONObject: claims))
        return "Bearer " + input + "." + AppleFixtures.base64URL(try key.signature(for: Data(input.utf8)).rawRepresentation)
    }

    @Test func signedItemsOfAnotherChainOrBundleAreRefused() async throws {
        let stranger = AppleFixtures(chain: try AppleFixtures.chain())
        try production.set(["histories": ["8000": [transaction("8000", original: "8000", by: stranger)], "8001": [transaction("8001", original: "8001", bundleID: "com.other.app")]]])
        let api = try api()
        let untrusted = try await #require(throws: StoreAPIError.self) { try await api.transactionHistoryPage(transactionID: "8000") }
        #expect(untrusted.kind == .malformed)
        #expect(untrusted.message.contains("signedTransactions[0]'s certificate chain does not verify"), "\(untrusted)")
        let foreign = try await #require(throws: StoreAPIError.self) { try await api.transactionHistoryPage(transactionID: "8001") }
        #expect(foreign.message == "signedTransactions[0] is a transaction of bundle com.other.app, not \(AppleFixtures.bundleID)")
    }

    @Test func a429WaitsUntilTheUnixMillisecondsAppleNames() async throws {
        try production.set(["statuses": ["1000": statuses("1000")]])
        try production.set(["fail_next": ["status": 429, "count": 1, "retry_after_ms": 1500]])
        // Timed on this side: the stand-in notes an arrival when its thread gets to it, late on a busy machine.
        let started = ContinuousClock.now
        let answer = try await api().subscriptionStatuses(transactionID: "1000")
        let elapsed = ContinuousClock.now - started
        #expect(answer.groups.count == 1)
        let traffic = try production.traffic()
        #expect(traffic.requests == 2)
        #expect(elapsed >= .milliseconds(1450), "\(elapsed)")
    }

    @Test func applesRetryableNotFoundErrorsAreTriedAgain() {
        func reply(_ status: Int, _ code: Int) -> StoreAPIClient.Reply {
            .init(status: status, headers: [:], body: Array(#"{"errorCode":\#(code),"errorMessage":"x"}"#.utf8))
        }
        #expect(AppStoreServerAPI.isRetryable(reply(404, 4_040_002)))
        #expect(AppStoreServerAPI.isRetryable(reply(404, 4_040_006)))
        #expect(!AppStoreServerAPI.isRetryable(reply(404, 4_040_010)))
    }
}
