import Crypto
import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// A real `entitled` and the stand-ins of the stores' APIs (Fixtures/), with the files `entitled-stores`
/// needs to reach them (the App Store's root certificate and in-app purchase key, Google's service account,
/// Stripe's API key): what the reconciliation, backfill and scheduled-reconciliation tests share.
///
/// `run` runs an `entitled-stores` subcommand (`reconcile`, `backfill`, `unmatched`) against them as an
/// operator would; `receiver()` starts the notification receiver (`serve`) that creates the memberships
/// the way production does. The App Store stand-in is production, and nothing is asked of a sandbox.
final class StoreSyncHarness {
    enum Store: Hashable { case apple, google, stripe }

    static let appleKeyID = AppStoreServerAPITests.keyID
    static let appleIssuerID = AppStoreServerAPITests.issuerID
    static let stripeKey = "sk_test_standin"

    let entitled: RunningEntitled
    /// A connection to `entitled` (as the admin when it has `--auth`).
    private(set) var client: EntitledConnection
    let files: TemporaryDirectory
    let apple: StoreStandIn?
    let google: StoreStandIn?
    let stripe: StoreStandIn?
    let fixtures: AppleFixtures
    /// The token file `entitled-stores` is given, when `entitled` has `--auth`.
    var tokenFile: String?
    private let appleKey = P256.Signing.PrivateKey()
    /// What the App Store stand-in serves, kept whole because its state is replaced key by key.
    private var appleHistories: [String: [String]] = [:]
    private var appleStatuses: [String: [[String: Any]]] = [:]
    private var appleNotifications: [[String: Any]] = []
    private var googleSubscriptions: [String: [String: Any]] = [:]
    private var googleProducts: [String: [String: Any]] = [:]
    private var stripeSubscriptions: [String: [String: Any]] = [:]

    /// - Parameter entitledArguments: further options of `entitled` (`--fsync no` for a test of thousands of writes).
    init(_ stores: Set<Store>, tokens: [AuthFileEntry] = [], entitledArguments: [String] = []) throws {
        entitled = try RunningEntitled(tokens: tokens, arguments: entitledArguments)
        client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port), token: tokens.isEmpty ? nil : AuthFileEntry.admin.token)
        files = try TemporaryDirectory()
        // Valid for the 200 days a test's notifications go back.
        fixtures = AppleFixtures(chain: try AppleFixtures.chain(validSince: 200 * 86_400))
        try fixtures.chain.rootPEM.write(toFile: files.path + "/apple-root.pem", atomically: true, encoding: .utf8)
        if stores.contains(.apple) {
            let standIn = try StoreStandIn("appstore_standin")
            try standIn.set([
                "environment": "Production", "bundle_id": AppleFixtures.bundleID, "key_id": Self.appleKeyID, "issuer_id": Self.appleIssuerID,
                "public_key": appleKey.publicKey.pemRepresentation,
            ])
            try appleKey.pemRepresentation.write(toFile: files.path + "/apple-key.p8", atomically: true, encoding: .utf8)
            apple = standIn
        } else {
            apple = nil
        }
        if stores.contains(.google) {
            let standIn = try StoreStandIn("google_standin")
            let key: [String: Any] = [
                "type": "service_account", "private_key": try GoogleNotificationTests.fixtureKey("service-account").pkcs8PEMRepresentation,
                "client_email": "play-reader@example-project.iam.gserviceaccount.com", "token_uri": standIn.url + "/token",
            ]
            try JSONSerialization.data(withJSONObject: key).write(to: URL(fileURLWithPath: files.path + "/google-account.json"))
            google = standIn
        } else {
            google = nil
        }
        if stores.contains(.stripe) {
            stripe = try StoreStandIn("stripe_standin")
            try (Self.stripeKey + "\n").write(toFile: files.path + "/stripe.key", atomically: true, encoding: .utf8)
        } else {
            stripe = nil
        }
    }

    var stateDirectory: String { files.path + "/state" }

    /// The options that reach the configured stores' APIs (and serve their notifications).
    var storeOptions: [String] {
        var options: [String] = []
        if let apple {
            options += [
                "--apple-root-ca", files.path + "/apple-root.pem", "--apple-bundle-id", AppleFixtures.bundleID,
                "--apple-key-file", files.path + "/apple-key.p8", "--apple-key-id", Self.appleKeyID, "--apple-issuer-id", Self.appleIssuerID,
                "--apple-api-url", apple.url, "--apple-sandbox-api-url", "none",
            ]
        }
        if let google {
            options += [
                "--google-package", GoogleNotificationTests.package, "--google-service-account", files.path + "/google-account.json",
                "--google-api-url", google.url,
            ]
        }
        if let stripe {
            options += ["--stripe-api-key-file", files.path + "/stripe.key", "--stripe-api-url", stripe.url, "--stripe-secret", StripeFixtures.secret]
        }
        return options
    }

    /// Runs `entitled-stores <subcommand>` against `entitled` and the stand-ins, with the state directory
    /// `stateDirectory`; `arguments` come last.
    ///
    /// It runs on a thread of its own: the test waits without holding one of the cooperative pool's threads
    /// (as many as the machine has cores), which other suites' asynchronous tests need meanwhile.
    func run(_ subcommand: String, _ arguments: [String] = [], timeout: Duration = .seconds(180)) async throws -> BoundedRun {
        var options = [subcommand, "--state-dir", stateDirectory]
        // `unmatched` reads the state directory only.
        if subcommand != "unmatched" { options += ["--entitled", "127.0.0.1:\(entitled.port)"] + storeOptions }
        if let tokenFile, subcommand != "unmatched" { options += ["--token-file", tokenFile] }
        let command = options + arguments
        let run = try await ImportHarness.onThread { try BoundedRun.run("entitled-stores", command, timeout: timeout) }
        #expect(!run.timedOut, "entitled-stores \(subcommand) did not finish: \(run.output)")
        return run
    }

    /// A token file holding `entry`'s token, for `run` (`tokenFile`).
    func writeTokenFile(_ entry: AuthFileEntry) throws -> String {
        let path = files.path + "/\(entry.role).token"
        try (entry.token + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The notification receiver (`serve`) of the configured stores, which reconciles every
    /// `reconcileIntervalHours` (by default never).
    func receiver(_ arguments: [String] = [], reconcileIntervalHours: Int = 0) throws -> RunningStores {
        var options = storeOptions + ["--reconcile-interval-hours", String(reconcileIntervalHours)]
        if let tokenFile { options += ["--token-file", tokenFile] }
        return try RunningStores(entitled: "127.0.0.1:\(entitled.port)", arguments: options + arguments)
    }

    /// `--since`'s value for `days` ago.
    static func since(daysAgo days: Double) -> String {
        ProtocolTime.string(milliseconds: Int64((Date().timeIntervalSince1970 - days * 86_400) * 1000))
    }

    // MARK: - The App Store

    /// An app account token (the App Store's user): a UUID.
    static func appleUser(_ number: Int) -> String { String(format: "00000000-0000-4000-8000-%012d", number) }

    static var now: Int64 { AppleFixtures.nowMilliseconds }
    static let day: Int64 = 86_400_000

    /// A transaction of the production App Store (`JWSTransactionDecodedPayload`), bought at `purchased`.
    static func appleTransaction(
        _ id: String, original: String, purchased: Int64, expires: Int64?, product: String = "premium.monthly",
        token: String? = AppleNotificationTests.user, revoked: Int64? = nil
    ) -> [String: Any] {
        var transaction = AppleFixtures.transaction(id, original: original, product: product, expires: expires ?? 0, token: token, environment: "Production")
        transaction["purchaseDate"] = purchased
        transaction["originalPurchaseDate"] = purchased
        if expires == nil {
            transaction["expiresDate"] = nil
            transaction["type"] = "Non-Consumable"
        }
        if let revoked {
            transaction["revocationDate"] = revoked
            transaction["revocationReason"] = 0
        }
        return transaction
    }

    /// A production notification's request body, as the receiver gets it.
    func appleNotification(
        _ type: String, subtype: String? = nil, uuid: String, signedDate: Int64, transaction: [String: Any], renewal: [String: Any]? = nil
    ) -> [UInt8] {
        fixtures.notification(type, subtype: subtype, uuid: uuid, signedDate: signedDate, environment: "Production", transaction: transaction, renewal: renewal)
    }

    /// What the App Store Server API says of the subscription (or one-time purchase) started by
    /// `original`: its transactions (Get Transaction History) and, for a subscription, its status and
    /// renewal info (Get All Subscription Statuses), signed now.
    func setApple(original: String, transactions: [[String: Any]], status: Int?, autoRenew: Bool = true, renewal: [String: Any] = [:]) throws {
        let now = Self.now
        appleHistories[original] = transactions.map { fixtures.sign($0.merging(["signedDate": now, "bundleId": AppleFixtures.bundleID]) { $1 }) }
        if let status, let newest = transactions.last {
            let info: [String: Any] = [
                "originalTransactionId": original, "autoRenewProductId": newest["productId"] ?? "premium.monthly", "autoRenewStatus": autoRenew ? 1 : 0,
                "environment": "Production", "signedDate": now,
            ]
            let signedRenewal = fixtures.sign(info.merging(renewal) { $1 })
            let signedNewest = fixtures.sign(newest.merging(["signedDate": now, "bundleId": AppleFixtures.bundleID]) { $1 })
            appleStatuses[original] = [[
                "subscriptionGroupIdentifier": "21000001",
                "lastTransactions": [["originalTransactionId": original, "status": status, "signedTransactionInfo": signedNewest, "signedRenewalInfo": signedRenewal]],
            ]]
        } else {
            appleStatuses[original] = nil
        }
        try apple?.set(["histories": appleHistories, "statuses": appleStatuses])
    }

    /// Adds a notification to the App Store's notification history (Get Notification History), sent at
    /// `date` (its `signedDate`), naming the customer's `original` transaction.
    func addAppleHistory(_ body: [UInt8], date: Int64, original: String) throws {
        let signedPayload = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])["signedPayload"]
        appleNotifications.append([
            "signedPayload": signedPayload as Any, "date": date, "transactionId": original,
            "sendAttempts": [["attemptDate": date, "sendAttemptResult": "SUCCESS"]],
        ])
        try apple?.set(["notifications": appleNotifications])
    }

    // MARK: - Google Play

    /// A `purchases.subscriptionsv2` resource.
    static func googleSubscription(
        _ state: String, order: String, expiry: Int64, autoRenew: Bool = true, user: String, product: String = "premium_monthly"
    ) -> [String: Any] {
        var subscription = GoogleNotificationTests.subscription(state, order: order, expiry: ProtocolTime.string(milliseconds: expiry), autoRenew: autoRenew, product: product)
        subscription["externalAccountIdentifiers"] = ["obfuscatedExternalAccountId": user]
        return subscription
    }

    /// A `purchases.products` resource: `purchaseState` 0 purchased, 1 canceled (refunded, charged back).
    static func googleProduct(order: String, user: String, purchaseState: Int = 0) -> [String: Any] {
        [
            "kind": "androidpublisher#productPurchase", "purchaseTimeMillis": String(now - 86_400_000), "purchaseState": purchaseState,
            "consumptionState": 0, "orderId": order, "purchaseType": 0, "acknowledgementState": 1, "obfuscatedExternalAccountId": user,
        ]
    }

    func setGoogle(subscription token: String, _ purchase: [String: Any]?) throws {
        googleSubscriptions[token] = purchase
        try google?.set(["subscriptions": googleSubscriptions])
    }

    func setGoogle(product token: String, _ purchase: [String: Any]?) throws {
        googleProducts[token] = purchase
        try google?.set(["products": googleProducts])
    }

    /// A Pub/Sub push of a developer notification, as Google sends it (the receiver here checks no push token).
    static func googlePush(_ messageID: String, _ notification: [String: Any], eventTime: Int64) throws -> [UInt8] {
        var developer: [String: Any] = ["version": "1.0", "packageName": GoogleNotificationTests.package, "eventTimeMillis": String(eventTime)]
        developer.merge(notification) { $1 }
        let data = try JSONSerialization.data(withJSONObject: developer).base64EncodedString()
        return Array(
            try JSONSerialization.data(withJSONObject: [
                "message": ["data": data, "messageId": messageID, "publishTime": "2026-11-26T12:00:00Z"],
                "subscription": "projects/example-project/subscriptions/play-notifications",
            ])
        )
    }

    // MARK: - Stripe

    /// A Stripe subscription object (API version 2025-03-31: the period on its item).
    static func stripeSubscription(
        _ id: String, user: String, status: String = "active", periodEnd: Int64, invoice: String, cancelAtPeriodEnd: Bool = false,
        product: String = "prod_pro", created: Int64 = StripeFixtures.now - 86_400
    ) -> [String: Any] {
        [
            "id": id, "object": "subscription", "customer": "cus_\(user)", "status": status, "livemode": false, "created": created,
            "start_date": created, "cancel_at_period_end": cancelAtPeriodEnd, "latest_invoice": invoice, "metadata": ["app_user_id": user],
            "items": ["object": "list", "data": [["id": "si_\(id)", "current_period_end": periodEnd, "price": ["id": "price_1", "product": product]]]],
        ]
    }

    func setStripe(_ subscription: [String: Any]) throws {
        guard let id = subscription["id"] as? String else { return }
        stripeSubscriptions[id] = subscription
        try stripe?.set(["subscriptions": Array(stripeSubscriptions.values)])
    }

    /// Many at once (one state update).
    func setStripe(all subscriptions: [[String: Any]]) throws {
        for subscription in subscriptions {
            if let id = subscription["id"] as? String { stripeSubscriptions[id] = subscription }
        }
        try stripe?.set(["subscriptions": Array(stripeSubscriptions.values)])
    }

    /// The webhook body of `type` carrying `subscription` (`created` in Unix seconds).
    static func stripeEvent(_ id: String, type: String = "customer.subscription.updated", created: Int64, object: [String: Any]) -> [UInt8] {
        StripeFixtures.event(id, type: type, created: created, object: object)
    }

    // MARK: - entitled

    /// A new connection to `entitled`, after it was restarted.
    func reconnect() {
        client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port), token: entitled.authFilePath == nil ? nil : AuthFileEntry.admin.token)
    }

    /// The user's memberships, newest first.
    func memberships(_ user: String) throws -> [MembershipInfo] {
        try client.send(.memberships(user: user)).memberships ?? []
    }

    /// The one membership holding the subscription or purchase started by `original`.
    func membership(original: String) throws -> MembershipInfo {
        let found = try client.send(.memberships(originalTransactionId: original)).memberships ?? []
        guard found.count == 1, let membership = found.first else {
            throw TestSupportFailure(description: "\(found.count) memberships hold original transaction \(original)")
        }
        return membership
    }

    /// The audit trail of `user`, newest first.
    func history(_ user: String) throws -> [HistoryEntry] {
        try client.send(.history(user: user)).history ?? []
    }

    /// The stand-in's API requests (method and path) so far.
    static func paths(_ standIn: StoreStandIn?) throws -> [String] {
        try standIn?.state()["paths"] as? [String] ?? []
    }
}
