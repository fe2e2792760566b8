import Crypto
import EntitledTestSupport
import Foundation

/// The App Store Server API as an import meets it: two stand-ins (Fixtures/appstore_standin.py, production
/// and sandbox) serving transactions and statuses signed by AppleFixtures' test chain, and the options
/// that point `entitled-stores` at them (the in-app purchase key's file, the root's file, the URLs).
final class AppleImportStore {
    static let keyID = AppStoreServerAPITests.keyID
    static let issuerID = AppStoreServerAPITests.issuerID
    let production: StoreStandIn
    let sandbox: StoreStandIn
    let fixtures: AppleFixtures
    private let key = P256.Signing.PrivateKey()
    private let files: TemporaryDirectory
    /// `--apple-*` options for `entitled-stores`.
    let arguments: [String]
    /// The root's file, for a `serve` beside the import (live notifications).
    let rootFile: String
    /// What the stand-ins serve, by environment: a test's purchases are added to it.
    private var histories: [String: [String: [String]]] = ["Production": [:], "Sandbox": [:]]
    private var statuses: [String: [String: [[String: Any]]]] = ["Production": [:], "Sandbox": [:]]

    init() throws {
        production = try StoreStandIn.appStore("Production", publicKeyPEM: key.publicKey.pemRepresentation, keyID: Self.keyID, issuerID: Self.issuerID)
        sandbox = try StoreStandIn.appStore("Sandbox", publicKeyPEM: key.publicKey.pemRepresentation, keyID: Self.keyID, issuerID: Self.issuerID)
        fixtures = AppleFixtures(chain: try AppleFixtures.chain())
        files = try TemporaryDirectory()
        let keyFile = files.path + "/SubscriptionKey.p8"
        try key.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
        rootFile = files.path + "/root.pem"
        try fixtures.chain.rootPEM.write(toFile: rootFile, atomically: true, encoding: .utf8)
        arguments = [
            "--apple-root-ca", rootFile, "--apple-bundle-id", AppleFixtures.bundleID, "--apple-key-file", keyFile, "--apple-key-id", Self.keyID,
            "--apple-issuer-id", Self.issuerID, "--apple-api-url", production.url, "--apple-sandbox-api-url", sandbox.url,
        ]
    }

    /// One purchase as the App Store Server API tells it: its transactions (`JWSTransactionDecodedPayload`s,
    /// oldest first) and, for a subscription, its status and renewal info.
    struct Purchase {
        var transactions: [[String: Any]]
        /// 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked; nil for a one-time purchase.
        var status: Int?
        /// `JWSRenewalInfoDecodedPayload` fields beyond the original transaction and the signing date.
        var renewal: [String: Any] = ["autoRenewStatus": 1]

        var original: String { transactions[0]["originalTransactionId"] as? String ?? "" }
        var environment: String { transactions[0]["environment"] as? String ?? "Production" }
    }

    /// Adds `purchases` to what the stand-ins serve: each in its environment's, its history under its
    /// original transaction (and under every transaction of it: Apple answers for any), its status if any.
    func serve(_ purchases: [Purchase]) throws {
        let now = AppleFixtures.nowMilliseconds
        for purchase in purchases {
            let signed = purchase.transactions.map { fixtures.sign($0.merging(["signedDate": now, "bundleId": AppleFixtures.bundleID]) { $1 }) }
            for transaction in purchase.transactions {
                histories[purchase.environment]?[transaction["transactionId"] as? String ?? ""] = signed
            }
            guard let status = purchase.status, let newest = signed.last else { continue }
            let renewal = fixtures.sign(
                [
                    "originalTransactionId": purchase.original, "autoRenewProductId": purchase.transactions.last?["productId"] ?? "",
                    "environment": purchase.environment, "signedDate": now,
                ].merging(purchase.renewal) { $1 }
            )
            statuses[purchase.environment]?[purchase.original] = [
                [
                    "subscriptionGroupIdentifier": "21000001",
                    "lastTransactions": [
                        ["originalTransactionId": purchase.original, "status": status, "signedTransactionInfo": newest, "signedRenewalInfo": renewal]
                    ],
                ]
            ]
        }
        try production.set(["histories": histories["Production"] ?? [:], "statuses": statuses["Production"] ?? [:]])
        try sandbox.set(["histories": histories["Sandbox"] ?? [:], "statuses": statuses["Sandbox"] ?? [:]])
    }

    /// A subscription of `periods` periods (a week's trial first when `trial`, then `period` each), the
    /// last one ending at `lastExpires`: its transactions, oldest first, ids counting up from `original`.
    static func subscription(
        _ original: String, periods: Int, lastExpires: Int64, period: Int64 = 30 * .day, trial: Bool = false, user: String?,
        product: String = "premium.monthly", environment: String = "Production", ownership: String = "PURCHASED"
    ) -> [[String: Any]] {
        var lengths = [Int64](repeating: period, count: periods)
        if trial { lengths[0] = 7 * .day }
        var starts: [Int64] = []
        var end = lastExpires
        for length in lengths.reversed() {
            starts.insert(end - length, at: 0)
            end -= length
        }
        return (0..<periods).map { index in
            var transaction = AppleFixtures.transaction(
                index == 0 ? original : String(Int64(original)! + Int64(index)), original: original, product: product,
                expires: starts[index] + lengths[index], token: user, environment: environment, offerType: trial && index == 0 ? 1 : nil
            )
            transaction["purchaseDate"] = starts[index]
            transaction["originalPurchaseDate"] = starts[0]
            transaction["inAppOwnershipType"] = ownership
            transaction["transactionReason"] = index == 0 ? "PURCHASE" : "RENEWAL"
            return transaction
        }
    }

    /// A one-time purchase (`Non-Consumable`): no expiry, no subscription status.
    static func oneTime(_ id: String, purchased: Int64, user: String?, product: String = "lifetime.unlock") -> [[String: Any]] {
        var transaction = AppleFixtures.transaction(id, original: id, product: product, expires: 0, token: user, environment: "Production")
        transaction["expiresDate"] = nil
        transaction["type"] = "Non-Consumable"
        transaction["purchaseDate"] = purchased
        transaction["originalPurchaseDate"] = purchased
        return [transaction]
    }

    /// The purchase times of `transactions`.
    static func purchaseDates(_ transactions: [[String: Any]]) -> [Int64] {
        transactions.map { $0["purchaseDate"] as? Int64 ?? -1 }
    }
}
