import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// The App Store's purchase-time path (`POST /purchases/apple`): a StoreKit 2 signed transaction, as the app
/// sends its backend right after a purchase, verified with the notifications' checks (a test chain carrying
/// Apple's marker extensions) and granted now, through real `entitled` and `entitled-stores` processes.
@Suite struct ApplePurchaseTests {
    static let token = "backend-1f2e3d4c5b6a7980"
    static let user = "0f4e2c1a-7d5b-4c1e-9a3f-2b6d8e0c4a91"
    let entitled: RunningEntitled
    let stores: RunningStores
    let client: EntitledConnection
    let apple: AppleFixtures
    private let directory: TemporaryDirectory
    private let files: TemporaryDirectory

    init() throws {
        let chain = try AppleFixtures.chain()
        apple = AppleFixtures(chain: chain)
        files = try TemporaryDirectory()
        let tokenFile = files.path + "/purchases.token"
        try (Self.token + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)
        entitled = try RunningEntitled()
        (stores, directory) = try AppleFixtures.receiver(trusting: chain, entitled: entitled, arguments: ["--purchases-token-file", tokenFile])
        client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port))
    }

    func report(_ fields: [String: String], bearer: String = ApplePurchaseTests.token) throws -> (status: Int, json: [String: Any]) {
        let body = try JSONSerialization.data(withJSONObject: fields)
        let reply = try stores.post("/purchases/apple", body: Array(body), headers: ["Authorization": "Bearer \(bearer)", "Content-Type": "application/json"])
        return (reply.status, (try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any]) ?? ["raw": reply.body])
    }

    func signedTransaction(_ id: String, original: String, token: String? = ApplePurchaseTests.user, bundleID: String = AppleFixtures.bundleID) -> String {
        var transaction = AppleFixtures.transaction(id, original: original, expires: AppleFixtures.nowMilliseconds + 30 * 86_400_000, token: token)
        transaction["bundleId"] = bundleID
        transaction["signedDate"] = AppleFixtures.nowMilliseconds
        return apple.sign(transaction)
    }

    /// `transaction` as StoreKit signs it for the app.
    func signed(_ transaction: [String: Any]) -> String {
        apple.sign(transaction.merging(["bundleId": AppleFixtures.bundleID, "signedDate": AppleFixtures.nowMilliseconds]) { $1 })
    }

    func notify(_ body: [UInt8]) throws -> String {
        try stores.post("/apple", body: body, headers: ["Content-Type": "application/json"]).body
    }

    func membership(_ reply: (status: Int, json: [String: Any])) -> MembershipInfo? {
        (reply.json["membership"] as? [String: Any]).flatMap { try? JSONSerialization.data(withJSONObject: $0) }
            .flatMap { try? JSONValue(parsing: String(decoding: $0, as: UTF8.self)) }.flatMap(MembershipInfo.init(json:))
    }

    @Test func aSignedTransactionIsGrantedAtOnceOnceAndItsNotificationFindsTheSameMembership() throws {
        let jws = signedTransaction("2000000101", original: "2000000101")
        let granted = try report(["user": Self.user, "signedTransaction": jws])
        #expect(granted.status == 200, "\(granted.json)")
        let membership = try #require(granted.json["membership"] as? [String: Any])
        #expect(membership["user"] as? String == Self.user)
        #expect(membership["productId"] as? String == "premium.monthly")
        #expect(membership["source"] as? String == "app_store")
        #expect(membership["isActive"] as? Bool == true)
        let again = try report(["user": Self.user, "signedTransaction": jws])
        #expect((again.json["membership"] as? [String: Any])?["id"] as? String == membership["id"] as? String)
        // The notification of the same purchase, a moment later, finds it: still one membership.
        let now = AppleFixtures.nowMilliseconds
        let subscribed = apple.notification(
            "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "n-p1", signedDate: now,
            transaction: AppleFixtures.transaction("2000000101", original: "2000000101", expires: now + 30 * 86_400_000)
        )
        #expect(try stores.post("/apple", body: subscribed, headers: ["Content-Type": "application/json"]).status == 200)
        #expect(try client.send(.memberships(user: Self.user)).memberships?.count == 1)
        let metrics = try stores.get("/metrics").body
        #expect(metrics.contains(#"entitled_stores_purchases_total{store="apple",outcome="granted"} 2"#), "\(metrics)")
    }

    @Test func aUserSpelledInUpperCaseIsTheSameUserTheNotificationsGrantTo() throws {
        // The backend may send the UUID it gave as appAccountToken in upper case; StoreKit and the
        // notifications carry it in lower case: one user, one membership.
        let jws = signedTransaction("2000000301", original: "2000000301")
        let granted = try report(["user": Self.user.uppercased(), "signedTransaction": jws])
        #expect(granted.status == 200, "\(granted.json)")
        #expect((granted.json["membership"] as? [String: Any])?["user"] as? String == Self.user)
        let now = AppleFixtures.nowMilliseconds
        let renewed = apple.notification(
            "DID_RENEW", uuid: "n-p3", signedDate: now,
            transaction: AppleFixtures.transaction("2000000302", original: "2000000301", expires: now + 60 * 86_400_000)
        )
        #expect(try stores.post("/apple", body: renewed, headers: ["Content-Type": "application/json"]).status == 200)
        let memberships = try #require(try client.send(.memberships(user: Self.user)).memberships)
        #expect(memberships.count == 1)
        #expect(memberships.first?.renewsCount == 1)
    }

    @Test func aTransactionThatCannotBeTrustedIsRefusedAndGrantsNothing() throws {
        let valid = signedTransaction("2000000201", original: "2000000201")
        #expect(try report(["user": Self.user, "signedTransaction": valid], bearer: "not-the-token-000").status == 401)
        let unknown = try report(["user": Self.user, "signedTransaction": valid, "price": "9.99"])
        #expect(unknown.status == 400)
        #expect(((unknown.json["error"] as? [String: Any])?["message"] as? String)?.contains("unknown field \"price\"") == true)
        // Signed by a chain the receiver does not trust.
        let stranger = AppleFixtures(chain: try AppleFixtures.chain())
        var transaction = AppleFixtures.transaction("2000000202", original: "2000000202", expires: AppleFixtures.nowMilliseconds + 86_400_000)
        transaction["bundleId"] = AppleFixtures.bundleID
        transaction["signedDate"] = AppleFixtures.nowMilliseconds
        let forged = try report(["user": Self.user, "signedTransaction": stranger.sign(transaction)])
        #expect(forged.status == 400)
        #expect((forged.json["error"] as? [String: Any])?["code"] as? String == "invalid_purchase")
        // Another app's, and one whose appAccountToken names someone else.
        #expect(try report(["user": Self.user, "signedTransaction": signedTransaction("2000000203", original: "2000000203", bundleID: "com.example.other")]).status == 400)
        let otherUser = try report(["user": "someone-else", "signedTransaction": valid])
        #expect(otherUser.status == 409)
        #expect(try client.send(.memberships(user: Self.user)).memberships == [])
        #expect(try client.send(.memberships(user: "someone-else")).memberships == [])
        // A store whose settings this receiver lacks is not served.
        let google = try stores.post(
            "/purchases/google", body: Array(#"{"user":"u","productId":"p","purchaseToken":"t"}"#.utf8),
            headers: ["Authorization": "Bearer \(Self.token)", "Content-Type": "application/json"]
        )
        #expect(google.status == 404)
        #expect(google.body.contains(#""code":"not_served""#), "\(google.body)")
        let metrics = try stores.get("/metrics").body
        #expect(metrics.contains(#"entitled_stores_purchases_total{store="apple",outcome="unauthorized"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"entitled_stores_purchases_total{store="apple",outcome="other_account"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"entitled_stores_purchases_total{store="google",outcome="not_served"} 1"#), "\(metrics)")
    }

    @Test func aSubscriptionBoughtRenewsUntilItsNotificationSaysRenewalIsOff() throws {
        let now = AppleFixtures.nowMilliseconds
        let transaction = AppleFixtures.transaction("2000000401", original: "2000000401", expires: now + 30 * 86_400_000)
        let bought = try report(["user": Self.user, "signedTransaction": signed(transaction)])
        #expect(bought.status == 200, "\(bought.json)")
        #expect(membership(bought)?.willRenew == true)
        #expect(membership(bought)?.renewState == "will_renew")
        // Its SUBSCRIBED/INITIAL_BUY, whose renewal info says the customer turned renewal off since.
        let subscribed = apple.notification(
            "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "p-off", signedDate: now, transaction: transaction, renewal: ["autoRenewStatus": 0]
        )
        #expect(try notify(subscribed) == "applied\n")
        let current = try #require(try client.send(.memberships(user: Self.user)).memberships?.first)
        #expect(current.willRenew == false)
        #expect(current.status == "canceled")
        #expect(try notify(subscribed) == "duplicate\n")
        #expect(try client.send(.history(user: Self.user)).history?.map(\.action) == ["cancellation", "grant"])
    }

    @Test func aLaterTransactionOfAKnownSubscriptionIsItsNewPeriodOnce() throws {
        let now = AppleFixtures.nowMilliseconds
        // Bought, and lapsed: its period ended an hour ago.
        let lapsed = AppleFixtures.transaction("2000000501", original: "2000000501", expires: now - 3_600_000)
        let first = try report(["user": Self.user, "signedTransaction": signed(lapsed)])
        #expect(membership(first)?.isActive == false)
        // The customer resubscribes, to the yearly product of the group: StoreKit's transaction keeps the original.
        let yearEnd = now + 365 * 86_400_000
        let yearly = AppleFixtures.transaction("2000000502", original: "2000000501", product: "premium.yearly", expires: yearEnd)
        let resubscribed = try report(["user": Self.user, "signedTransaction": signed(yearly)])
        #expect(resubscribed.status == 200, "\(resubscribed.json)")
        let membership = try #require(self.membership(resubscribed))
        #expect(membership.id == self.membership(first)?.id)
        #expect(membership.isActive)
        #expect(membership.productId == "premium.yearly")
        #expect(membership.expiresAt.flatMap(ProtocolTime.milliseconds) == yearEnd)
        #expect(membership.renewsCount == 1)
        // Again, and its notification: nothing more.
        #expect(self.membership(try report(["user": Self.user, "signedTransaction": signed(yearly)]))?.renewsCount == 1)
        #expect(try notify(apple.notification("SUBSCRIBED", subtype: "RESUBSCRIBE", uuid: "p-re", signedDate: now, transaction: yearly, renewal: ["autoRenewStatus": 1])) == "duplicate\n")
        // The lapsed period reported late does not take the expiry back.
        #expect(self.membership(try report(["user": Self.user, "signedTransaction": signed(lapsed)]))?.expiresAt.flatMap(ProtocolTime.milliseconds) == yearEnd)
        #expect(try client.send(.history(user: Self.user)).history?.map(\.action) == ["renewal", "product_change", "grant"])
    }

    @Test func aPurchaseItsNotificationGrantedFirstIsAnsweredWithThatMembership() throws {
        let now = AppleFixtures.nowMilliseconds
        let transaction = AppleFixtures.transaction("2000000601", original: "2000000601", expires: now + 30 * 86_400_000)
        #expect(try notify(apple.notification("SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "p-first", signedDate: now, transaction: transaction, renewal: ["autoRenewStatus": 1])) == "applied\n")
        let granted = try #require(try client.send(.memberships(user: Self.user)).memberships?.first)
        let reply = try report(["user": Self.user, "signedTransaction": signed(transaction)])
        #expect(reply.status == 200, "\(reply.json)")
        #expect(membership(reply)?.id == granted.id)
        #expect(membership(reply)?.willRenew == true)
        #expect(try client.send(.memberships(user: Self.user)).memberships?.count == 1)
        #expect(try client.send(.history(user: Self.user)).history?.map(\.action) == ["grant"])
    }

    @Test func aPeriodBoughtAfterARefundIsANewMembershipItsRenewalsReach() throws {
        let now = AppleFixtures.nowMilliseconds
        let bought = AppleFixtures.transaction("2000000701", original: "2000000701", expires: now + 30 * 86_400_000)
        let first = try #require(self.membership(try report(["user": Self.user, "signedTransaction": signed(bought)])))
        let refund = apple.notification(
            "REFUND", uuid: "p-refund", signedDate: now - 60_000, transaction: bought.merging(["revocationDate": now - 60_000]) { $1 }
        )
        #expect(try notify(refund) == "applied\n")
        // Bought again in the app: a new period of the same subscription.
        let again = AppleFixtures.transaction("2000000702", original: "2000000701", expires: now + 31 * 86_400_000)
        let reply = try report(["user": Self.user, "signedTransaction": signed(again)])
        #expect(reply.status == 200, "\(reply.json)")
        let second = try #require(self.membership(reply))
        #expect(second.id != first.id)
        #expect(second.isActive)
        #expect(second.willRenew)
        #expect(second.transactions.map(\.id) == ["2000000702"])
        #expect(self.membership(try report(["user": Self.user, "signedTransaction": signed(again)]))?.id == second.id)
        let renewed = AppleFixtures.transaction("2000000703", original: "2000000701", expires: now + 61 * 86_400_000)
        #expect(try notify(apple.notification("DID_RENEW", uuid: "p-renew", signedDate: now, transaction: renewed)) == "applied\n")
        let memberships = try #require(try client.send(.memberships(user: Self.user)).memberships)
        #expect(memberships.count == 2)
        #expect(memberships.first { $0.id == second.id }?.renewsCount == 1)
        #expect(memberships.first { $0.id == first.id }?.status == "revoked")
    }

    @Test func aPeriodBoughtAfterARefundWithoutAnAccountTokenIsTheCallersNotTheRefundedOwners() throws {
        // The refunded membership was granted to another user of the same Apple ID; the app reports the new
        // period, bought with no appAccountToken, for the user signed in now: it is theirs.
        let now = AppleFixtures.nowMilliseconds
        let bought = AppleFixtures.transaction("2000000801", original: "2000000801", expires: now + 30 * 86_400_000, token: nil)
        let first = try #require(self.membership(try report(["user": "earlier-owner", "signedTransaction": signed(bought)])))
        #expect(first.user == "earlier-owner")
        let refund = apple.notification(
            "REFUND", uuid: "p-refund-8", signedDate: now - 60_000, transaction: bought.merging(["revocationDate": now - 60_000]) { $1 }
        )
        #expect(try notify(refund) == "applied\n")
        let again = AppleFixtures.transaction("2000000802", original: "2000000801", expires: now + 31 * 86_400_000, token: nil)
        let reply = try report(["user": "signed-in-now", "signedTransaction": signed(again)])
        #expect(reply.status == 200, "\(reply.json)")
        let second = try #require(self.membership(reply))
        #expect(second.user == "signed-in-now", "the period after the refund went to \(second.user ?? "nobody")")
        #expect(try client.send(.check(user: "signed-in-now", product: "premium.monthly")).body["active"]?.boolValue == true)
        #expect(try client.send(.check(user: "earlier-owner", product: "premium.monthly")).body["active"]?.boolValue == false)
    }
}
