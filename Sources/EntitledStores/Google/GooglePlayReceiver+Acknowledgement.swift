import EntitledClient
import Logging

/// Google refunds a purchase that is not acknowledged within three days
/// (https://developer.android.com/google/play/billing/integrate#process, "Acknowledge purchases"). A purchase
/// the receiver grants, from its notification or at purchase time, is acknowledged once the grant is durable
/// (`entitled` answered it): a grant without an acknowledgement would be refunded, an acknowledgement without
/// a grant would be a purchase paid for and never given.
extension GooglePlayReceiver {
    /// Whether the Play Developer API says the subscription (its `subscriptionsv2` resource) still waits for
    /// its acknowledgement: `ACKNOWLEDGEMENT_STATE_PENDING`
    /// (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2#AcknowledgementState).
    static func awaitsAcknowledgement(subscription purchase: JSONValue) -> Bool {
        purchase["acknowledgementState"]?.stringValue == "ACKNOWLEDGEMENT_STATE_PENDING"
    }

    /// Whether the Play Developer API says the one-time purchase (its `products` resource) still waits for its
    /// acknowledgement: `acknowledgementState` 0, "Yet to be acknowledged"
    /// (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.products).
    static func awaitsAcknowledgement(product purchase: JSONValue) -> Bool {
        purchase["acknowledgementState"]?.intValue == 0
    }

    /// Acknowledges purchase `token` of `productID` (`GooglePlayAPI.acknowledge`). A failure that may pass
    /// (no answer, a 5xx, a 429, refused credentials: a setting to fix) is `unavailable`: the grant made
    /// before it stands, and the store's redelivery (or the backend's repeat) finds it granted and
    /// acknowledges it then. One Google will never take (any other 4xx: a purchase it no longer lets be
    /// acknowledged) is logged as an error and passed over, since a 503 would have Pub/Sub deliver the
    /// notification again for days to no end; the grant stands, and Google's refund of the purchase, if it
    /// comes, arrives as its voided-purchase notification.
    func acknowledge(_ kind: GooglePlayAPI.PurchaseKind, productID: String, purchaseToken token: String) async throws(ReceiveFailure) {
        do throws(StoreAPIError) {
            try await api.acknowledge(kind, productID: productID, purchaseToken: token)
        } catch {
            switch error.kind {
            case .unavailable, .rateLimited, .unauthorized:
                throw .unavailable(EntitledUnavailable("the purchase is granted, but the Play Developer API did not acknowledge it: \(error)"))
            case .notFound, .refused, .malformed:
                Self.logger.error(
                    "Google refused to acknowledge a granted purchase; it may refund it after three days",
                    metadata: ["product": "\(productID)", "error": "\(error)"]
                )
            }
        }
    }

    /// Where the receiver says what no answer to the store carries.
    static let logger = Logger(label: "entitled-stores.google")

    /// Acknowledges subscription `token` when its notification leaves it granted (`synced`: a membership
    /// holds it, not revoked) and Google still waits for the acknowledgement: a purchase granted from its
    /// notification alone, whose app's backend never reported it (`POST /purchases/google`), would otherwise
    /// be refunded after three days.
    func acknowledgeIfGranted(subscription purchase: JSONValue, token: String, _ synced: StateSyncOutcome) async throws(ReceiveFailure) {
        // Only a purchase that was paid: a pending one cannot be acknowledged yet, an expired one no more
        // (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2#SubscriptionState).
        let unpaid: Set<String> = ["SUBSCRIPTION_STATE_PENDING", "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED", "SUBSCRIPTION_STATE_EXPIRED"]
        guard Self.awaitsAcknowledgement(subscription: purchase), let membership = synced.membership, membership.revokedAt == nil,
            !unpaid.contains(purchase["subscriptionState"]?.stringValue ?? ""),
            let product = purchase["lineItems"]?.arrayValue?.first?["productId"]?.stringValue
        else { return }
        try await acknowledge(.subscription, productID: product, purchaseToken: token)
    }

    /// Acknowledges one-time purchase `token` of `sku` when its notification leaves it granted (`outcome`
    /// applied it, or found it applied before) and Google still waits for the acknowledgement.
    func acknowledgeIfGranted(product purchase: JSONValue, sku: String, token: String, _ outcome: NotificationOutcome) async throws(ReceiveFailure) {
        guard Self.awaitsAcknowledgement(product: purchase) else { return }
        switch outcome {
        case .applied, .duplicate: try await acknowledge(.product, productID: sku, purchaseToken: token)
        case .ignored, .unmatched, .awaitingPurchase: return
        }
    }
}
