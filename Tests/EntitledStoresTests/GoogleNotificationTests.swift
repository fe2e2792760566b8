import Crypto
import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing
import _CryptoExtras

/// Google Play's real-time developer notifications, pushed as Pub/Sub pushes with Google's bearer token,
/// through real `entitled` and `entitled-stores` processes and a local stand-in for Google's OAuth, Play
/// Developer API and signing-key endpoints.
@Suite struct GoogleNotificationTests {
    static let package = "com.example.app"
    static let audience = "https://stores.example.com/google"
    static let pushEmail = "pubsub-push@example-project.iam.gserviceaccount.com"
    /// The bearer token of the purchase-time path (`--purchases-token-file`).
    static let purchasesToken = "backend-7d1e0c52a9f34b86"
    let google: StoreStandIn
    let entitled: RunningEntitled
    let stores: RunningStores
    let client: EntitledConnection
    let serviceAccountKey: _RSA.Signing.PrivateKey
    let googleKey: _RSA.Signing.PrivateKey
    private let files: TemporaryDirectory

    init() throws {
        google = try StoreStandIn("google_standin")
        serviceAccountKey = try Self.fixtureKey("service-account")
        googleKey = try Self.fixtureKey("google-signing")
        let primitives = try googleKey.publicKey.getKeyPrimitives()
        try google.set([
            "jwks": ["keys": [["kty": "RSA", "alg": "RS256", "use": "sig", "kid": "google-key-1", "n": Self.base64URL(primitives.modulus), "e": Self.base64URL(primitives.publicExponent)]]]
        ])
        files = try TemporaryDirectory()
        let keyFile = files.path + "/service-account.json"
        let key: [String: Any] = [
            "type": "service_account", "project_id": "example-project", "private_key_id": "abc123",
            "private_key": serviceAccountKey.pkcs8PEMRepresentation, "client_email": "play-reader@example-project.iam.gserviceaccount.com",
            "token_uri": google.url + "/token",
        ]
        try JSONSerialization.data(withJSONObject: key).write(to: URL(fileURLWithPath: keyFile))
        let purchasesTokenFile = files.path + "/purchases.token"
        try (Self.purchasesToken + "\n").write(toFile: purchasesTokenFile, atomically: true, encoding: .utf8)
        entitled = try RunningEntitled()
        stores = try RunningStores(
            entitled: "127.0.0.1:\(entitled.port)",
            arguments: [
                "--google-package", Self.package, "--google-service-account", keyFile, "--google-push-audience", Self.audience,
                "--google-push-email", Self.pushEmail, "--google-api-url", google.url, "--google-certs-url", google.url + "/certs",
                "--unmatched-retry-seconds", "1", "--purchases-token-file", purchasesTokenFile,
            ]
        )
        client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port))
    }

    /// A test key of Fixtures/ (generating one takes tens of seconds in a debug build).
    static func fixtureKey(_ name: String) throws -> _RSA.Signing.PrivateKey {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/test-\(name)-key.pem")
        return try _RSA.Signing.PrivateKey(pemRepresentation: String(contentsOf: file, encoding: .utf8))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Google's ID token for the push, as Pub/Sub sends it.
    func pushToken(audience: String = GoogleNotificationTests.audience, key: _RSA.Signing.PrivateKey? = nil, keyID: String = "google-key-1") throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        let header = try JSONSerialization.data(withJSONObject: ["alg": "RS256", "kid": keyID, "typ": "JWT"])
        let claims = try JSONSerialization.data(withJSONObject: [
            "iss": "https://accounts.google.com", "aud": audience, "iat": now, "exp": now + 3600, "email": Self.pushEmail,
            "email_verified": true, "sub": "1234567890",
        ])
        let input = Self.base64URL(header) + "." + Self.base64URL(claims)
        let signature = try (key ?? googleKey).signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Self.base64URL(signature.rawRepresentation)
    }

    /// A Pub/Sub push of a developer notification.
    func push(_ messageID: String, _ notification: [String: Any], package: String = GoogleNotificationTests.package, eventTime: Int64, token: String?) throws -> HTTPReply {
        var developer: [String: Any] = ["version": "1.0", "packageName": package, "eventTimeMillis": String(eventTime)]
        developer.merge(notification) { $1 }
        let data = try JSONSerialization.data(withJSONObject: developer).base64EncodedString()
        let body = try JSONSerialization.data(withJSONObject: [
            "message": ["data": data, "messageId": messageID, "message_id": messageID, "publishTime": "2026-11-26T12:00:00Z"],
            "subscription": "projects/example-project/subscriptions/play-notifications",
        ])
        return try stores.post("/google", body: Array(body), headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
    }

    static func subscription(_ state: String, order: String, expiry: String, autoRenew: Bool = true, product: String = "premium_monthly") -> [String: Any] {
        [
            "kind": "androidpublisher#subscriptionPurchaseV2", "startTime": "2026-11-01T00:00:00Z", "regionCode": "US", "subscriptionState": state,
            "latestOrderId": order, "acknowledgementState": "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED", "testPurchase": [String: Any](),
            "externalAccountIdentifiers": ["obfuscatedExternalAccountId": "user_g"],
            "lineItems": [["productId": product, "expiryTime": expiry, "autoRenewingPlan": ["autoRenewEnabled": autoRenew]]],
        ]
    }

    func membership() throws -> MembershipInfo? {
        try client.send(.memberships(user: "user_g")).memberships?.first
    }

    @Test func aSubscriptionsNotificationsBringItsMembershipToWhatThePlayAPISays() throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000
        let subscribed = ["subscriptionNotification": ["version": "1.0", "notificationType": 4, "purchaseToken": "token-1", "subscriptionId": "premium_monthly"]]
        try google.set(["subscriptions": ["token-1": Self.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.1111-2222-3333-44444", expiry: "2099-01-01T00:00:00.123456Z")]])
        #expect(try push("m-1", subscribed, eventTime: start, token: try pushToken()).body == "applied\n")
        var current = try #require(try membership())
        #expect(current.productId == "premium_monthly")
        #expect(current.source == "play_store")
        #expect(current.environment == "sandbox")
        #expect(current.expiresAt == "2099-01-01T00:00:00.123Z")
        #expect(current.transactions.map(\.id) == ["GPA.1111-2222-3333-44444"])
        #expect(try push("m-1", subscribed, eventTime: start, token: try pushToken()).body == "duplicate\n")

        // Renewed: a new order and expiry.
        try google.set(["subscriptions": ["token-1": Self.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.1111-2222-3333-44444..0", expiry: "2099-02-01T00:00:00Z")]])
        let renewed = ["subscriptionNotification": ["version": "1.0", "notificationType": 2, "purchaseToken": "token-1", "subscriptionId": "premium_monthly"]]
        #expect(try push("m-2", renewed, eventTime: start + 1000, token: try pushToken()).body == "applied\n")
        current = try #require(try membership())
        #expect(current.renewsCount == 1)
        #expect(current.transactions.map(\.id) == ["GPA.1111-2222-3333-44444", "GPA.1111-2222-3333-44444..0"])

        // In grace: a billing issue until the line item's expiry, which Google extends to the grace's end.
        try google.set(["subscriptions": ["token-1": Self.subscription("SUBSCRIPTION_STATE_IN_GRACE_PERIOD", order: "GPA.1111-2222-3333-44444..0", expiry: "2099-02-08T00:00:00Z")]])
        let inGrace = ["subscriptionNotification": ["version": "1.0", "notificationType": 6, "purchaseToken": "token-1", "subscriptionId": "premium_monthly"]]
        #expect(try push("m-3", inGrace, eventTime: start + 2000, token: try pushToken()).status == 200)
        current = try #require(try membership())
        #expect(current.renewState == "billing_issue")
        #expect(current.gracePeriodExpiresAt == "2099-02-08T00:00:00Z")

        // A notification older than the last one applied, delivered late, changes nothing.
        try google.set(["subscriptions": ["token-1": Self.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.1111-2222-3333-44444..0", expiry: "2099-02-01T00:00:00Z", autoRenew: false)]])
        let late = ["subscriptionNotification": ["version": "1.0", "notificationType": 3, "purchaseToken": "token-1", "subscriptionId": "premium_monthly"]]
        #expect(try push("m-late", late, eventTime: start + 1500, token: try pushToken()).body.hasPrefix("ignored"))
        #expect(try membership()?.willRenew == true)

        // Expired.
        try google.set(["subscriptions": ["token-1": Self.subscription("SUBSCRIPTION_STATE_EXPIRED", order: "GPA.1111-2222-3333-44444..0", expiry: "2099-02-08T00:00:00Z", autoRenew: false)]])
        let expired = ["subscriptionNotification": ["version": "1.0", "notificationType": 13, "purchaseToken": "token-1", "subscriptionId": "premium_monthly"]]
        #expect(try push("m-4", expired, eventTime: start + 3000, token: try pushToken()).status == 200)
        #expect(try membership()?.isActive == false)
        #expect(try client.send(.history(user: "user_g")).history?.map(\.action) == ["expiration", "billing_issue", "renewal", "grant"])

        // One OAuth token for all of it, asked for with an assertion the service account's key signed.
        let requests = try google.tokenRequests()
        #expect(requests.count == 1)
        let parts = try #require(requests.assertion?.split(separator: "."))
        let signature = try #require(Data(base64Encoded: String(parts[2]).paddedBase64))
        #expect(serviceAccountKey.publicKey.isValidSignature(.init(rawRepresentation: signature), for: Data("\(parts[0]).\(parts[1])".utf8), padding: .insecurePKCS1v1_5))
    }

    @Test func aPurchaseNamingNoAccountIsKeptUntilAGrantNamesItsTokenThenApplied() throws {
        // The app did not set obfuscatedAccountId: the notification cannot say whose purchase it is. It is
        // kept (not answered 200 and forgotten), and applied once the app's backend grants the purchase
        // naming its purchase token as the original transaction.
        var purchase = Self.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.5555-6666-7777-88888..1", expiry: "2099-03-01T00:00:00Z")
        purchase["externalAccountIdentifiers"] = nil
        try google.set(["subscriptions": ["token-k": purchase]])
        let renewed = ["subscriptionNotification": ["version": "1.0", "notificationType": 2, "purchaseToken": "token-k", "subscriptionId": "premium_monthly"]]
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let kept = try push("m-k1", renewed, eventTime: now - 1000, token: try pushToken())
        #expect(kept.status == 200)
        #expect(kept.body.contains("names no obfuscatedExternalAccountId; kept until a grant names original transaction token-k"), "\(kept.body)")
        #expect(try client.send(.memberships(originalTransactionId: "token-k")).memberships == [])
        // While it waits, it costs the Play Developer API's daily quota nothing: three retry rounds, no call.
        let calls = try google.state()["api_requests"] as? Int
        Thread.sleep(forTimeInterval: 3.5)
        #expect(try google.state()["api_requests"] as? Int == calls)

        let granted = try client.send(
            .grant(
                user: "user_k", product: "premium_monthly", source: "play_store", expiresAt: "2099-02-01T00:00:00Z",
                transactionId: "GPA.5555-6666-7777-88888", originalTransactionId: "token-k"
            )
        )
        #expect(granted.isOK)
        var current: MembershipInfo?
        for _ in 0..<300 {
            current = try client.send(.memberships(user: "user_k")).memberships?.first
            if current?.expiresAt == "2099-03-01T00:00:00Z" { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(current?.expiresAt == "2099-03-01T00:00:00Z", "the kept renewal was not applied")
        #expect(current?.transactions.map(\.id).contains("GPA.5555-6666-7777-88888..1") == true)
        // The retry counts its outcome after entitled has answered it, so the count may trail the membership.
        var metrics = ""
        for _ in 0..<100 {
            metrics = try stores.get("/metrics").body
            if metrics.contains(#"outcome="applied""#) { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(metrics.contains(#"entitled_stores_notifications_total{store="google",outcome="unmatched"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"entitled_stores_notifications_total{store="google",outcome="applied"} 1"#), "\(metrics)")
    }

    /// The app's backend reporting a purchase at purchase time.
    func reportPurchase(_ fields: [String: String], bearer: String = GoogleNotificationTests.purchasesToken) throws -> (status: Int, json: [String: Any]) {
        let body = try JSONSerialization.data(withJSONObject: fields)
        let reply = try stores.post("/purchases/google", body: Array(body), headers: ["Authorization": "Bearer \(bearer)", "Content-Type": "application/json"])
        return (reply.status, (try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any]) ?? ["raw": reply.body])
    }

    @Test func aSubscriptionReportedAtPurchaseTimeIsGrantedAcknowledgedOnceAndItsNotificationFindsIt() throws {
        var purchase = Self.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.3333-4444-5555-66666", expiry: "2099-04-01T00:00:00Z")
        purchase["externalAccountIdentifiers"] = nil
        purchase["acknowledgementState"] = "ACKNOWLEDGEMENT_STATE_PENDING"
        try google.set(["subscriptions": ["token-p": purchase]])
        let fields = ["user": "user_p", "productId": "premium_monthly", "purchaseToken": "token-p", "type": "subscription"]
        let granted = try reportPurchase(fields)
        #expect(granted.status == 200, "\(granted.json)")
        let membership = try #require(granted.json["membership"] as? [String: Any])
        #expect(membership["user"] as? String == "user_p")
        #expect(membership["productId"] as? String == "premium_monthly")
        #expect(membership["expiresAt"] as? String == "2099-04-01T00:00:00Z")
        #expect(membership["isActive"] as? Bool == true)
        // Acknowledged, so that Google does not refund it after three days.
        #expect(try google.state()["acknowledged"] as? Int == 1)

        // Reported again: the same membership, nothing granted or acknowledged twice.
        let again = try reportPurchase(fields)
        #expect(again.status == 200)
        #expect((again.json["membership"] as? [String: Any])?["id"] as? String == membership["id"] as? String)
        #expect(try google.state()["acknowledged"] as? Int == 1)
        // The notification that follows finds it.
        let purchased = ["subscriptionNotification": ["version": "1.0", "notificationType": 4, "purchaseToken": "token-p", "subscriptionId": "premium_monthly"]]
        #expect(try push("m-p1", purchased, eventTime: Int64(Date().timeIntervalSince1970 * 1000) - 5000, token: try pushToken()).status == 200)
        #expect(try client.send(.memberships(user: "user_p")).memberships?.count == 1)
    }

    @Test func aPurchaseReportedAtPurchaseTimeIsRefusedWhenItCannotBeTrusted() throws {
        var someoneElses = Self.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.7777-0000-0000-00001", expiry: "2099-04-01T00:00:00Z")
        someoneElses["externalAccountIdentifiers"] = ["obfuscatedExternalAccountId": "user_other"]
        var pending = Self.subscription("SUBSCRIPTION_STATE_PENDING", order: "GPA.7777-0000-0000-00002", expiry: "2099-04-01T00:00:00Z")
        pending["externalAccountIdentifiers"] = nil
        try google.set(["subscriptions": ["token-o": someoneElses, "token-w": pending]])
        let valid = ["user": "user_x", "productId": "premium_monthly", "purchaseToken": "token-o", "type": "subscription"]
        #expect(try reportPurchase(valid, bearer: "not-the-token-0000").status == 401)
        var unknownField = valid
        unknownField["price"] = "9.99"
        let refused = try reportPurchase(unknownField)
        #expect(refused.status == 400)
        #expect(((refused.json["error"] as? [String: Any])?["message"] as? String)?.contains("unknown field \"price\"") == true, "\(refused.json)")
        var unknownToken = valid
        unknownToken["purchaseToken"] = "token-nobody-knows"
        #expect(try reportPurchase(unknownToken).status == 400)
        var otherProduct = valid
        otherProduct["productId"] = "premium_yearly"
        #expect(try reportPurchase(otherProduct).status == 400)
        let otherAccount = try reportPurchase(valid)
        #expect(otherAccount.status == 409, "\(otherAccount.json)")
        #expect((otherAccount.json["error"] as? [String: Any])?["code"] as? String == "other_account")
        var waiting = valid
        waiting["purchaseToken"] = "token-w"
        #expect(try reportPurchase(waiting).status == 202)
        #expect(try client.send(.memberships(user: "user_x")).memberships == [])
        try google.set(["fail": true])
        var down = valid
        down["purchaseToken"] = "token-w"
        #expect(try reportPurchase(down).status == 503)
    }

    @Test func aOneTimeProductReportedAtPurchaseTimeIsGrantedForLifeAndAcknowledged() throws {
        try google.set([
            "products": ["token-l": ["kind": "androidpublisher#productPurchase", "purchaseTimeMillis": "1764806400000", "purchaseState": 0, "consumptionState": 0, "orderId": "GPA.1212-3434-5656-78787", "acknowledgementState": 0, "purchaseType": 0]]
        ])
        let granted = try reportPurchase(["user": "user_l", "productId": "lifetime_pro", "purchaseToken": "token-l", "type": "product"])
        #expect(granted.status == 200, "\(granted.json)")
        let membership = try #require(granted.json["membership"] as? [String: Any])
        #expect(membership["user"] as? String == "user_l")
        #expect(membership["expiresAt"] is NSNull)
        #expect(try google.state()["acknowledged"] as? Int == 1)
        #expect(try reportPurchase(["user": "user_l", "productId": "lifetime_pro", "purchaseToken": "token-l", "type": "product"]).status == 200)
        #expect(try client.send(.memberships(user: "user_l")).memberships?.count == 1)
    }

    @Test func aOneTimePurchaseIsGrantedForLifeAndAVoidedOneIsRefunded() throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        try google.set([
            "products": [
                "token-p": [
                    "kind": "androidpublisher#productPurchase", "purchaseState": 0, "consumptionState": 0, "orderId": "GPA.9999-0000-1111-22222",
                    "purchaseTimeMillis": String(now), "obfuscatedExternalAccountId": "user_g", "acknowledgementState": 1,
                ]
            ]
        ])
        let bought = ["oneTimeProductNotification": ["version": "1.0", "notificationType": 1, "purchaseToken": "token-p", "sku": "lifetime_unlock"]]
        #expect(try push("p-1", bought, eventTime: now, token: try pushToken()).body == "applied\n")
        #expect(try client.send(.check(user: "user_g", product: "lifetime_unlock")).body["active"]?.boolValue == true)
        let voided = ["voidedPurchaseNotification": ["purchaseToken": "token-p", "orderId": "GPA.9999-0000-1111-22222", "productType": 2, "refundType": 1]]
        #expect(try push("p-2", voided, eventTime: now + 1000, token: try pushToken()).body == "applied\n")
        #expect(try client.send(.check(user: "user_g", product: "lifetime_unlock")).body["active"]?.boolValue == false)
        #expect(try push("p-3", ["testNotification": ["version": "1.0"]], eventTime: now, token: try pushToken()).body.hasPrefix("ignored"))
    }

    @Test func unauthenticatedForeignOrUnanswerablePushesChangeNothing() throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        try google.set(["subscriptions": ["token-2": Self.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.5555", expiry: "2099-01-01T00:00:00Z")]])
        let subscribed = ["subscriptionNotification": ["version": "1.0", "notificationType": 4, "purchaseToken": "token-2", "subscriptionId": "premium_monthly"]]
        let stranger = try Self.fixtureKey("stranger")
        let replies = [
            try push("r-1", subscribed, eventTime: now, token: nil),
            try push("r-2", subscribed, eventTime: now, token: try pushToken(audience: "https://someone.else/push")),
            try push("r-3", subscribed, eventTime: now, token: try pushToken(key: stranger)),
            try push("r-4", subscribed, eventTime: now, token: try pushToken(key: stranger, keyID: "unknown-key")),
            try push("r-5", subscribed, package: "com.other.app", eventTime: now, token: try pushToken()),
        ]
        #expect(replies.map(\.status) == [400, 400, 400, 400, 400])
        #expect(replies[0].body == "the push has no bearer token (Authorization: Bearer ...)\n")
        #expect(replies[1].body == "the push's bearer token is for another audience than the configured one\n")
        #expect(replies[2].body == "the push's bearer token's signature does not verify\n")
        #expect(replies[4].body == "the notification is for package com.other.app, not com.example.app\n")
        #expect(try membership() == nil)

        // Google's API failing: 503, and Pub/Sub's retry is applied once.
        try google.set(["fail": true])
        let failing = try push("r-6", subscribed, eventTime: now, token: try pushToken())
        #expect(failing.status == 503)
        #expect(try membership() == nil)
        try google.set(["fail": false])
        #expect(try push("r-6", subscribed, eventTime: now, token: try pushToken()).body == "applied\n")
        #expect(try push("r-6", subscribed, eventTime: now, token: try pushToken()).body == "duplicate\n")
        #expect(try client.send(.memberships(user: "user_g")).memberships?.count == 1)
    }
}

extension GoogleNotificationTests {
    @Test func anUnreachableEntitledAnswers503AndPubSubsRetryAppliesOnce() throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        try google.set(["subscriptions": ["token-u": Self.subscription("SUBSCRIPTION_STATE_ACTIVE", order: "GPA.7777", expiry: "2099-01-01T00:00:00Z")]])
        let subscribed = ["subscriptionNotification": ["version": "1.0", "notificationType": 4, "purchaseToken": "token-u", "subscriptionId": "premium_monthly"]]
        entitled.kill()
        #expect(try push("u-1", subscribed, eventTime: now, token: try pushToken()).status == 503)
        try entitled.restart()
        let retried = try stores.retryingWhileUnavailable { try push("u-1", subscribed, eventTime: now, token: try pushToken()) }
        #expect(retried.body == "applied\n")
        #expect(try push("u-1", subscribed, eventTime: now, token: try pushToken()).body == "duplicate\n")
        let client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port))
        #expect(try client.send(.memberships(originalTransactionId: "token-u")).memberships?.count == 1)
    }
}

extension String {
    /// Base64url made base64 with padding.
    var paddedBase64: String {
        var text = replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return text
    }
}
