import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// App Store Server Notifications V2 through real `entitled` and `entitled-stores` processes, signed with
/// a test CA chain that carries Apple's marker extensions: a subscription's life, redeliveries, old
/// notifications, and every forged or foreign variant refused with nothing changed.
@Suite struct AppleNotificationTests {
    static let user = "0f4e2c1a-7d5b-4c1e-9a3f-2b6d8e0c4a91"
    let entitled: RunningEntitled
    let stores: RunningStores
    let client: EntitledConnection
    let apple: AppleFixtures

    init() throws {
        let chain = try AppleFixtures.chain()
        apple = AppleFixtures(chain: chain)
        entitled = try RunningEntitled()
        (stores, rootDirectory) = try AppleFixtures.receiver(trusting: chain, entitled: entitled, arguments: ["--unmatched-retry-seconds", "1"])
        client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port))
    }

    private let rootDirectory: TemporaryDirectory

    func deliver(_ body: [UInt8]) throws -> HTTPReply {
        try stores.post("/apple", body: body, headers: ["Content-Type": "application/json"])
    }

    func current() throws -> MembershipInfo? {
        try client.send(.memberships(user: Self.user)).memberships?.first
    }

    @Test func aSubscriptionsNotificationsBecomeItsMembershipsLife() throws {
        let start = AppleFixtures.nowMilliseconds - 3_600_000
        let firstEnd = start + 7 * 86_400_000
        let secondEnd = firstEnd + 30 * 86_400_000
        let subscribed = apple.notification(
            "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "n-1", signedDate: start,
            transaction: AppleFixtures.transaction("2000000001", original: "2000000001", expires: firstEnd, offerType: 1),
            renewal: ["autoRenewStatus": 1, "autoRenewProductId": "premium.monthly"]
        )
        #expect(try deliver(subscribed).body == "applied\n")
        var membership = try #require(try current())
        #expect(membership.productId == "premium.monthly")
        #expect(membership.source == "app_store")
        #expect(membership.environment == "sandbox")
        #expect(membership.status == "trialing")
        #expect(membership.willRenew)
        #expect(membership.transactions.map(\.id) == ["2000000001"])
        // Apple delivers it again: nothing new.
        #expect(try deliver(subscribed).body == "duplicate\n")

        let renewed = apple.notification(
            "DID_RENEW", uuid: "n-2", signedDate: start + 1000,
            transaction: AppleFixtures.transaction("2000000002", original: "2000000001", expires: secondEnd)
        )
        #expect(try deliver(renewed).body == "applied\n")
        membership = try #require(try current())
        #expect(membership.status == "active")
        #expect(membership.renewsCount == 1)
        #expect(membership.transactions.map(\.id) == ["2000000001", "2000000002"])

        let graceEnd = secondEnd + 16 * 86_400_000
        let failed = apple.notification(
            "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", uuid: "n-3", signedDate: start + 2000,
            transaction: AppleFixtures.transaction("2000000002", original: "2000000001", expires: secondEnd),
            renewal: ["autoRenewStatus": 1, "gracePeriodExpiresDate": graceEnd]
        )
        #expect(try deliver(failed).status == 200)
        membership = try #require(try current())
        #expect(membership.renewState == "billing_issue")
        #expect(membership.gracePeriodExpiresAt.flatMap(ProtocolTime.milliseconds) == graceEnd)

        // A cancellation signed before the billing failure, delivered late: ignored.
        let late = apple.notification(
            "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "n-late", signedDate: start + 1500,
            transaction: AppleFixtures.transaction("2000000002", original: "2000000001", expires: secondEnd)
        )
        #expect(try deliver(late).body.hasPrefix("ignored"))
        #expect(try current()?.willRenew == true)

        let expired = apple.notification(
            "GRACE_PERIOD_EXPIRED", uuid: "n-4", signedDate: start + 3000,
            transaction: AppleFixtures.transaction("2000000002", original: "2000000001", expires: secondEnd)
        )
        #expect(try deliver(expired).status == 200)
        #expect(try current()?.isActive == false)
        #expect(try client.send(.history(user: Self.user)).history?.map(\.action) == ["expiration", "billing_issue", "renewal", "grant"])
        // A TEST notification is answered and changes nothing.
        let test = try deliver(apple.notification("TEST", uuid: "n-test", signedDate: start + 4000))
        #expect(test.status == 200)
        #expect(test.body.hasPrefix("ignored: a TEST notification"))
    }

    @Test func aRefundEndsAOneTimePurchaseAndAnUnknownPurchaseWithoutATokenIsUnmatched() throws {
        let now = AppleFixtures.nowMilliseconds - 60_000
        var lifetime = AppleFixtures.transaction("3000000001", original: "3000000001", product: "lifetime.unlock", expires: 0)
        lifetime["expiresDate"] = nil
        lifetime["type"] = "Non-Consumable"
        #expect(try deliver(apple.notification("ONE_TIME_CHARGE", uuid: "o-1", signedDate: now, transaction: lifetime)).body == "applied\n")
        #expect(try client.send(.check(user: Self.user, product: "lifetime.unlock")).body["active"]?.boolValue == true)
        #expect(try deliver(apple.notification("REFUND", uuid: "o-2", signedDate: now + 1000, transaction: lifetime)).body == "applied\n")
        #expect(try client.send(.check(user: Self.user, product: "lifetime.unlock")).body["active"]?.boolValue == false)

        let anonymous = AppleFixtures.transaction("4000000001", original: "4000000001", expires: now + 86_400_000, token: nil)
        let unmatched = try deliver(apple.notification("DID_RENEW", uuid: "o-3", signedDate: now, transaction: anonymous))
        #expect(unmatched.status == 200)
        #expect(unmatched.body.hasPrefix("unmatched"))
        #expect(try client.send(.memberships(originalTransactionId: "4000000001")).memberships == [])
    }

    @Test func forgedForeignOrMalformedNotificationsAreRefusedWithNothingChanged() throws {
        let now = AppleFixtures.nowMilliseconds - 60_000
        let transaction = AppleFixtures.transaction("5000000001", original: "5000000001", expires: now + 86_400_000)
        let genuine = apple.notification("SUBSCRIBED", uuid: "f-1", signedDate: now, transaction: transaction)
        // The payload altered after signing.
        let json = try JSONSerialization.jsonObject(with: Data(genuine)) as! [String: String]
        let parts = json["signedPayload"]!.split(separator: ".").map(String.init)
        let altered = AppleFixtures.base64URL(Data(String(decoding: Data(base64Encoded: parts[1].padded)!, as: UTF8.self).replacingOccurrences(of: "f-1", with: "f-2").utf8))
        let tampered = Array(try JSONSerialization.data(withJSONObject: ["signedPayload": parts[0] + "." + altered + "." + parts[2]]))
        // Signed by a chain from another root, by one without Apple's markers, by an expired leaf; for another app.
        let strangers = AppleFixtures(chain: try AppleFixtures.chain())
        let unmarked = AppleFixtures(chain: try AppleFixtures.chain(markers: false))
        let expired = AppleFixtures(chain: try AppleFixtures.chain(leafExpired: true))
        let cases: [(body: [UInt8], status: Int, reason: String)] = [
            (tampered, 400, "signedPayload's signature does not verify with its leaf certificate"),
            (strangers.notification("SUBSCRIBED", uuid: "f-3", signedDate: now, transaction: transaction), 400, "signedPayload's certificate chain does not verify"),
            (unmarked.notification("SUBSCRIBED", uuid: "f-4", signedDate: now, transaction: transaction), 400, "signedPayload's certificate chain does not verify"),
            (expired.notification("SUBSCRIBED", uuid: "f-5", signedDate: now, transaction: transaction), 400, "signedPayload's certificate chain does not verify"),
            (apple.notification("SUBSCRIBED", uuid: "f-6", signedDate: now, bundleID: "com.other.app", transaction: transaction), 400, "the notification is for bundle com.other.app"),
            (Array(#"{"payload":"x"}"#.utf8), 400, "the body has no signedPayload"),
            (Array(#"{"signedPayload":"a.b"}"#.utf8), 400, "signedPayload is not a JWS"),
        ]
        for (body, status, reason) in cases {
            let reply = try deliver(body)
            #expect(reply.status == status, "\(reason): \(reply.body)")
            #expect(reply.body.hasPrefix(reason), "\(reply.body)")
        }
        #expect(try client.send(.memberships(originalTransactionId: "5000000001")).memberships == [])
        #expect(try current() == nil)
        // The genuine one is applied.
        #expect(try deliver(genuine).body == "applied\n")
        let metrics = try stores.get("/metrics").body
        #expect(metrics.contains(#"entitled_stores_refused_total{store="apple",reason="untrusted_chain"} 3"#))
        #expect(metrics.contains(#"entitled_stores_refused_total{store="apple",reason="wrong_app"} 1"#))
    }
}

extension AppleNotificationTests {
    /// `entitled-stores unmatched` on the receiver's state directory: what it prints.
    func listUnmatched() throws -> String {
        let process = ServerProcess(
            arguments: ["unmatched", "--state-dir", stores.directory.path + "/entitled-stores-data"], workingDirectory: stores.directory.path,
            executable: "entitled-stores"
        )
        #expect(try process.runToExit() == 0)
        return process.standardOutputText()
    }

    @Test func aNotificationForAPurchaseNotYetGrantedIsKeptListedAndAppliedOnceItIs() throws {
        let now = AppleFixtures.nowMilliseconds - 60_000
        #expect(try listUnmatched().hasPrefix("no notification is waiting"))
        // Bought before the app set appAccountToken: no user to grant it to.
        let anonymous = AppleFixtures.transaction("7000000002", original: "7000000001", expires: now + 30 * 86_400_000, token: nil)
        let renewal = apple.notification("DID_RENEW", uuid: "k-1", signedDate: now, transaction: anonymous)
        let reply = try deliver(renewal)
        #expect(reply.status == 200)
        #expect(reply.body.hasSuffix("kept until a grant names original transaction 7000000001\n"))
        // Delivered again: still one kept.
        #expect(try deliver(renewal).status == 200)
        let listed = try listUnmatched()
        #expect(listed.contains("apple  original transaction 7000000001"))
        #expect(listed.contains("1 notification waiting"))

        // The app's backend grants the purchase it restored: the kept renewal is applied to it.
        let granted = try client.send(
            .grant(user: "restored_user", product: "premium.monthly", duration: "7d", transactionId: "7000000001")
        )
        #expect(granted.isOK)
        var renewed: MembershipInfo?
        for _ in 0..<100 {
            renewed = try client.send(.memberships(user: "restored_user")).memberships?.first
            if renewed?.renewsCount == 1 { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(renewed?.renewsCount == 1)
        #expect(renewed?.transactions.map(\.id) == ["7000000001", "7000000002"])
        #expect(try listUnmatched().hasPrefix("no notification is waiting"))
    }

    @Test func anUnreachableEntitledAnswers503AndApplesRetryAppliesOnce() throws {
        let now = AppleFixtures.nowMilliseconds - 60_000
        let body = apple.notification(
            "SUBSCRIBED", uuid: "u-1", signedDate: now,
            transaction: AppleFixtures.transaction("6000000001", original: "6000000001", expires: now + 86_400_000)
        )
        entitled.kill()
        let down = try deliver(body)
        #expect(down.status == 503)
        try entitled.restart()
        let retried = try stores.retryingWhileUnavailable { try deliver(body) }
        #expect(retried.body == "applied\n")
        #expect(try deliver(body).body == "duplicate\n")
        let client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port))
        #expect(try client.send(.memberships(originalTransactionId: "6000000001")).memberships?.count == 1)
    }
}

extension String {
    /// Base64url made base64 with padding, for reading a JWS part in a test.
    var padded: String {
        var text = replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return text
    }
}
