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
        let acknowledgement: String?
        switch purchase.kind {
        case .subscription:
            guard let resource = try await PurchaseFailure.attempting({ () async throws(ReceiveFailure) in
                try await fetch("subscriptionsv2/tokens/\(StoreHTTP.escaped(token))", context)
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
            // subscriptionsv2: ACKNOWLEDGEMENT_STATE_PENDING until acknowledged.
            acknowledgement =
                resource["acknowledgementState"]?.stringValue == "ACKNOWLEDGEMENT_STATE_PENDING"
                ? "subscriptions/\(StoreHTTP.escaped(purchase.productID))/tokens/\(StoreHTTP.escaped(token)):acknowledge" : nil
        case .product:
            guard let resource = try await PurchaseFailure.attempting({ () async throws(ReceiveFailure) in
                try await fetch("products/\(StoreHTTP.escaped(purchase.productID))/tokens/\(StoreHTTP.escaped(token))", context)
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
            // products: acknowledgementState 0 until acknowledged, 1 after.
            acknowledgement =
                resource["acknowledgementState"]?.intValue == 0
                ? "products/\(StoreHTTP.escaped(purchase.productID))/tokens/\(StoreHTTP.escaped(token)):acknowledge" : nil
        }
        if case .unmatched(let reason) = outcome { throw PurchaseFailure(.otherAccount, reason) }
        let membership = try await PurchaseFailure.attempting { () async throws(ReceiveFailure) in
            if let acknowledgement { try await acknowledge(acknowledgement, context) }
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

    /// `purchases.subscriptions.acknowledge` / `purchases.products.acknowledge`; a purchase acknowledged
    /// already is answered 400 by Google, which is success here.
    private func acknowledge(_ path: String, _ context: Context) async throws(ReceiveFailure) {
        do throws(StoreHTTP.Unavailable) {
            let token = try await tokens.token(now: context.now)
            let url = "\(settings.apiURL)/androidpublisher/v3/applications/\(settings.packageName)/purchases/\(path)"
            let reply = try await http.postEmptyJSON(url, bearer: token)
            guard (200..<300).contains(reply.status) || reply.status == 400 else {
                throw StoreHTTP.Unavailable(reason: "the Play Developer API answered \(reply.status) to the acknowledgement")
            }
        } catch {
            throw .unavailable(EntitledUnavailable(error.reason))
        }
    }
}
