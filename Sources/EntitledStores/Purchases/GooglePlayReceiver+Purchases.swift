import EntitledClient

/// A Google Play purchase as the app's backend reports it the moment the app has it, before Google's
/// notification (seconds to minutes later): the purchase token and product the Play Billing Library gave
/// the app, and the app's user.
public struct GooglePlayPurchase: Sendable, Hashable {
    public enum Kind: String, Sendable, CaseIterable {
        case subscription, product
    }

    public var user: String
    public var productID: String
    public var purchaseToken: String
    public var kind: Kind

    public init(user: String, productID: String, purchaseToken: String, kind: Kind) {
        self.user = user
        self.productID = productID
        self.purchaseToken = purchaseToken
        self.kind = kind
    }
}

extension GooglePlayReceiver {
    /// Verifies `purchase` with the Play Developer API (`purchases.subscriptionsv2.get` or
    /// `purchases.products.get`), grants it to its user with the store's ids (the purchase token as the
    /// original transaction, the order id as the transaction), so that the notifications that follow find
    /// the same membership, acknowledges it (Google refunds a purchase not acknowledged within three days),
    /// and returns the membership as `entitled` has it. A repeat, or a purchase its notification granted
    /// already, grants nothing more.
    public func grantAtPurchase(_ purchase: GooglePlayPurchase, now: Int64) async throws(PurchaseFailure) -> JSONValue {
        let token = purchase.purchaseToken
        let context = Context(messageID: "purchase-\(token)", time: ProtocolTime.string(milliseconds: now * 1000), now: now)
        let outcome: NotificationOutcome
        let acknowledgement: GooglePlayAPI.PurchaseKind?
        switch purchase.kind {
        case .subscription:
            guard let resource = try await PurchaseFailure.attempting({ () async throws(ReceiveFailure) in
                try await fetch { () async throws(StoreAPIError) in try await api.subscription(purchaseToken: token) }
            }) else {
                throw PurchaseFailure(.invalidPurchase, "Google Play does not know this purchase token")
            }
            let items = resource["lineItems"]?.arrayValue ?? []
            guard items.contains(where: { $0["productId"]?.stringValue == purchase.productID }) else {
                throw PurchaseFailure(.invalidPurchase, "the subscription purchase is not of product \(purchase.productID)")
            }
            try Self.checkAccount(resource["externalAccountIdentifiers"]?["obfuscatedExternalAccountId"]?.stringValue, of: purchase)
            if resource["subscriptionState"]?.stringValue == "SUBSCRIPTION_STATE_PENDING" {
                throw PurchaseFailure(.pending, "the subscription's payment is pending: its notification grants it once paid")
            }
            outcome = try await PurchaseFailure.attempting { () async throws(ReceiveFailure) in
                try await applySubscription(resource, token: token, user: purchase.user, context)
            }
            acknowledgement = Self.awaitsAcknowledgement(subscription: resource) ? .subscription : nil
        case .product:
            guard let resource = try await PurchaseFailure.attempting({ () async throws(ReceiveFailure) in
                try await fetch { () async throws(StoreAPIError) in try await api.product(purchase.productID, purchaseToken: token) }
            }) else {
                throw PurchaseFailure(.invalidPurchase, "Google Play does not know this purchase token for product \(purchase.productID)")
            }
            try Self.checkAccount(resource["obfuscatedExternalAccountId"]?.stringValue, of: purchase)
            // purchaseState: 0 purchased, 1 canceled, 2 pending.
            switch resource["purchaseState"]?.intValue {
            case 0: break
            case 2: throw PurchaseFailure(.pending, "the purchase's payment is pending: its notification grants it once paid")
            default: throw PurchaseFailure(.invalidPurchase, "the purchase was canceled")
            }
            outcome = try await PurchaseFailure.attempting { () async throws(ReceiveFailure) in
                try await applyProduct(resource, token: token, sku: purchase.productID, user: purchase.user, context)
            }
            acknowledgement = Self.awaitsAcknowledgement(product: resource) ? .product : nil
        }
        if case .unmatched(let reason) = outcome { throw PurchaseFailure(.otherAccount, reason) }
        let membership = try await PurchaseFailure.attempting { () async throws(ReceiveFailure) in
            // After the grant: an acknowledgement that fails is a 503, and the backend's repeat finds the
            // purchase granted and acknowledges it then.
            if let acknowledgement { try await acknowledge(acknowledgement, productID: purchase.productID, purchaseToken: token) }
            return try await MembershipWriter(gateway: gateway).membershipObject(ofOriginalTransaction: token)
        }
        guard let membership else { throw PurchaseFailure(.unavailable, "the purchase was granted, but entitled did not list it; ask again") }
        return membership
    }

    /// The account the purchase names, if it names one, must be the request's user.
    private static func checkAccount(_ named: String?, of purchase: GooglePlayPurchase) throws(PurchaseFailure) {
        guard let named, named != purchase.user else { return }
        throw PurchaseFailure(.otherAccount, "the purchase names another account (obfuscatedExternalAccountId) than user \(purchase.user)")
    }
}
