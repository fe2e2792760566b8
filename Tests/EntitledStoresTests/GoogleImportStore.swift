import EntitledClient
import EntitledTestSupport
import Foundation

/// The Play Developer API as an import meets it: the stand-in of Google's OAuth token endpoint and Play
/// Developer API (Fixtures/google_standin.py), a service account key file whose `token_uri` is the
/// stand-in's, and the options that point `entitled-stores` at them.
final class GoogleImportStore {
    let standIn: StoreStandIn
    private let files: TemporaryDirectory
    /// `--google-*` options for `entitled-stores`.
    let arguments: [String]
    private var subscriptions: [String: [String: Any]] = [:]
    private var products: [String: [String: Any]] = [:]

    init() throws {
        standIn = try StoreStandIn("google_standin")
        files = try TemporaryDirectory()
        let keyFile = files.path + "/service-account.json"
        let key: [String: Any] = [
            "type": "service_account", "project_id": "example-project", "private_key_id": "abc123",
            "private_key": try GoogleNotificationTests.fixtureKey("service-account").pkcs8PEMRepresentation,
            "client_email": "play-reader@example-project.iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token",
        ]
        try JSONSerialization.data(withJSONObject: key).write(to: URL(fileURLWithPath: keyFile))
        arguments = [
            "--google-package", GoogleNotificationTests.package, "--google-service-account", keyFile, "--google-api-url", standIn.url,
            "--google-token-url", standIn.url + "/token",
        ]
    }

    /// Adds subscription purchases (`SubscriptionPurchaseV2`, by purchase token) to what the stand-in serves.
    func serve(subscriptions added: [String: [String: Any]]) throws {
        subscriptions.merge(added) { $1 }
        try standIn.set(["subscriptions": subscriptions])
    }

    /// Adds one-time purchases (`ProductPurchase`, by purchase token) to what the stand-in serves.
    func serve(products added: [String: [String: Any]]) throws {
        products.merge(added) { $1 }
        try standIn.set(["products": products])
    }

    /// A `purchases.subscriptionsv2` resource
    /// (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2).
    static func subscription(
        _ state: String, order: String, started: Int64, expiry: Int64, autoRenew: Bool = true, user: String?, product: String = "premium_monthly",
        test: Bool = false
    ) -> [String: Any] {
        var purchase: [String: Any] = [
            "kind": "androidpublisher#subscriptionPurchaseV2", "startTime": ProtocolTime.string(milliseconds: started, alwaysWithMilliseconds: true), "regionCode": "US",
            "subscriptionState": state, "latestOrderId": order, "acknowledgementState": "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED",
            "lineItems": [["productId": product, "expiryTime": ProtocolTime.string(milliseconds: expiry, alwaysWithMilliseconds: true), "autoRenewingPlan": ["autoRenewEnabled": autoRenew]]],
        ]
        if let user { purchase["externalAccountIdentifiers"] = ["obfuscatedExternalAccountId": user] }
        if test { purchase["testPurchase"] = [String: Any]() }
        return purchase
    }

    /// A `purchases.products` resource
    /// (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.products): `purchaseState`
    /// 0 purchased, 1 canceled, 2 pending.
    static func product(order: String, purchased: Int64, state: Int = 0, user: String?) -> [String: Any] {
        var purchase: [String: Any] = [
            "kind": "androidpublisher#productPurchase", "purchaseTimeMillis": String(purchased), "purchaseState": state, "consumptionState": 0,
            "orderId": order, "acknowledgementState": 1, "regionCode": "US",
        ]
        if let user { purchase["obfuscatedExternalAccountId"] = user }
        return purchase
    }
}
