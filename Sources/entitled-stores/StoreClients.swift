import ArgumentParser
import EntitledClient
import EntitledStores
import Foundation

/// The stores whose APIs the settings give, each with the receiver that writes what it says: what
/// `import`, `backfill` and the reconciliation ask and apply.
struct StoreClients: Sendable {
    var apple: (receiver: AppleReceiver, api: AppStoreServerAPI)?
    var google: (receiver: GooglePlayReceiver, api: GooglePlayAPI)?
    var stripe: (receiver: StripeReceiver, api: StripeAPI)?

    init(settings: StoresSettings, gateway: any EntitledGateway) throws {
        do {
            if let appleSettings = settings.apple, let apiSettings = settings.appleAPI {
                apple = (try AppleReceiver(settings: appleSettings, gateway: gateway), try AppStoreServerAPI(settings: apiSettings))
            }
            if let googleSettings = settings.google {
                let account = try GoogleServiceAccount(json: googleSettings.serviceAccountJSON)
                google = (
                    try GooglePlayReceiver(settings: googleSettings, gateway: gateway),
                    GooglePlayAPI(packageName: googleSettings.packageName, serviceAccount: account, apiURL: googleSettings.apiURL, tokenURL: googleSettings.tokenURL)
                )
            }
            if let stripeSettings = settings.stripe, let key = stripeSettings.apiKey {
                stripe = (StripeReceiver(settings: stripeSettings, gateway: gateway), StripeAPI(secretKey: key, apiURL: stripeSettings.apiURL))
            }
        } catch let error as StoreAPISettingsError {
            throw ValidationError(error.message)
        } catch let error as NotificationRefusal {
            throw ValidationError(error.reason)
        }
    }

    /// Each configured store as the reconciliation asks it: the membership's purchase fetched from its store
    /// and brought to it.
    var reconcilerStores: [Reconciler.Store] {
        var stores: [Reconciler.Store] = []
        if let apple {
            stores.append(
                Reconciler.Store(source: "app_store") { membership, sync throws(SyncFailure) in
                    guard let held = membership.transactions.first?.originalTransactionId else {
                        throw SyncFailure(kind: "no_transaction", message: "membership \(membership.id) holds no App Store transaction to ask about", mayPassLater: false)
                    }
                    // A membership of the periods paid after a refund holds `ORIGINAL~2`: Apple knows `ORIGINAL`.
                    let original = RefundSuccession.storeIdentifier(of: held)
                    let state = try await Self.appleState(apple.api, original: original)
                    return try await Self.receiving { () async throws(ReceiveFailure) in try await apple.receiver.bring(state, user: membership.user, sync: sync) }
                }
            )
        }
        if let google {
            stores.append(
                Reconciler.Store(source: "play_store") { membership, sync throws(SyncFailure) in
                    guard let token = membership.transactions.first?.originalTransactionId else {
                        throw SyncFailure(kind: "no_transaction", message: "membership \(membership.id) holds no purchase token to ask Google about", mayPassLater: false)
                    }
                    if token.hasPrefix("GPA.") {
                        // Imported from an export that named Google's order, not the purchase token the API needs.
                        throw SyncFailure(
                            kind: SyncFailure.cannotBeAsked,
                            message: "membership \(membership.id) was imported with Google's order id \(token), not its purchase token: its notifications keep it current, the API cannot be asked",
                            mayPassLater: false
                        )
                    }
                    if membership.expiresAt == nil {
                        // A one-time product: its membership's product is the Play product id.
                        let purchase = try await Self.asking { () async throws(StoreAPIError) in try await google.api.product(membership.productId, purchaseToken: token) }
                        return try await Self.receiving { () async throws(ReceiveFailure) in
                            try await google.receiver.bring(product: purchase, token: token, sku: membership.productId, user: membership.user, sync: sync)
                        }
                    }
                    let purchase = try await Self.asking { () async throws(StoreAPIError) in try await google.api.subscription(purchaseToken: token) }
                    return try await Self.receiving { () async throws(ReceiveFailure) in
                        try await google.receiver.bring(subscription: purchase, token: token, user: membership.user, sync: sync)
                    }
                }
            )
        }
        if let stripe {
            stores.append(
                Reconciler.Store(source: "stripe") { membership, sync throws(SyncFailure) in
                    guard let original = membership.transactions.first?.originalTransactionId, original.hasPrefix("sub_") else {
                        throw SyncFailure(kind: "no_transaction", message: "membership \(membership.id) names no Stripe subscription (sub_...)", mayPassLater: false)
                    }
                    // A membership of the periods paid after a refund holds `sub_...~2`: Stripe knows the subscription.
                    let subscription = RefundSuccession.storeIdentifier(of: original)
                    let object = try await Self.asking { () async throws(StoreAPIError) in try await stripe.api.subscription(subscription) }
                    return try await Self.receiving { () async throws(ReceiveFailure) in try await stripe.receiver.bring(subscriptionObject: object, sync: sync) }
                }
            )
        }
        return stores
    }

    /// An App Store purchase as the App Store Server API tells it: every transaction (Get Transaction
    /// History, all pages) and the status of its subscription (Get All Subscription Statuses; none for a
    /// one-time purchase).
    /// - Parameter identifier: the purchase's original transaction id, or any transaction id of it (Apple
    ///   answers for any: an app's backend may have kept the newest one).
    static func appleState(_ api: AppStoreServerAPI, original identifier: String) async throws(SyncFailure) -> AppleSubscriptionState {
        // The customer's history: every purchase of theirs, of which this one's transactions are kept.
        var history: [JSONValue] = []
        do throws(StoreAPIError) {
            for try await page in api.transactionHistory(transactionID: identifier) { history += page.transactions }
        } catch {
            throw SyncFailure(error)
        }
        let original = history.first { $0["transactionId"]?.stringValue == identifier }?["originalTransactionId"]?.stringValue ?? identifier
        let transactions = history.filter { $0["originalTransactionId"]?.stringValue == original }
        guard let first = transactions.first else {
            throw SyncFailure(kind: "not_found", message: "the App Store lists no transaction of original transaction \(original)", mayPassLater: false)
        }
        // Only auto-renewable subscriptions have a status; a one-time purchase is its transactions.
        guard first["type"]?.stringValue == "Auto-Renewable Subscription" else {
            return AppleSubscriptionState(transactions: transactions, status: nil, renewal: nil)
        }
        let statuses = try await asking { () async throws(StoreAPIError) in try await api.subscriptionStatuses(transactionID: original) }
        let last = statuses.groups.lazy.flatMap(\.lastTransactions).first { $0.originalTransactionID == original }
        return AppleSubscriptionState(transactions: transactions, status: last?.status, renewal: last?.renewal)
    }

    static func asking<T>(_ call: () async throws(StoreAPIError) -> T) async throws(SyncFailure) -> T {
        do {
            return try await call()
        } catch {
            throw SyncFailure(error)
        }
    }

    static func receiving(_ body: () async throws(ReceiveFailure) -> StateSyncOutcome) async throws(SyncFailure) -> StateSyncOutcome {
        do {
            return try await body()
        } catch {
            throw SyncFailure(error)
        }
    }
}
