import EntitledClient

/// A `voidedPurchaseNotification` (https://developer.android.com/google/play/billing/rtdn-reference#voided-purchase):
/// a purchase refunded or charged back. `productType` 1 is a subscription, 2 a one-time product; `refundType` 1
/// (`REFUND_TYPE_FULL_REFUND`) voids the whole purchase, 2 (`REFUND_TYPE_QUANTITY_BASED_PARTIAL_REFUND`) only
/// some units of a multi-quantity one-time purchase, and may come several times for one purchase.
extension GooglePlayReceiver {
    static let productTypeSubscription = 1
    static let refundTypeQuantityBasedPartial = 2

    func purchaseVoided(token: String, orderID: String?, productType: Int?, refundType: Int?, _ context: Context) async throws(ReceiveFailure) -> NotificationOutcome {
        var writer = MembershipWriter(gateway: gateway)
        var found = try await writer.membership(ofOriginalTransaction: token)
        if found == nil, let orderID { found = try await writer.membership(ofTransaction: orderID) }
        // A refund of a purchase not granted yet is kept too: granted later, it must not keep its access.
        guard let membership = found else { return .awaitingPurchase(originalTransaction: token, reason: "no membership holds the voided purchase") }
        if refundType == Self.refundTypeQuantityBasedPartial, let kept = try await unitsStillPaid(membership, token: token, productType: productType) {
            return .ignored("a quantity-based partial refund: \(kept) of the purchase's units are still paid for, and its access stays")
        }
        if productType == Self.productTypeSubscription, let orderID, let newest = membership.transactions.last?.id, newest != orderID,
            membership.transactions.contains(where: { $0.id == orderID })
        {
            // An earlier period's order: the money for a period that is over went back, the current one is
            // still paid for. RevenueCat revokes only for the latest period's refund; a refund Google revokes
            // the subscription for comes as SUBSCRIPTION_REVOKED too.
            return .ignored("the refund of an earlier period's order (\(orderID)): the current period, order \(newest), is still paid for")
        }
        try await writer.apply(
            .event(membership: membership.id, type: .refund, eventId: context.eventID(.refund), eventTime: context.time, transactionId: orderID, reason: context.reason)
        )
        return writer.outcome
    }

    /// The units of a multi-quantity one-time purchase still paid for after a quantity-based partial refund:
    /// `refundableQuantity` of its `products` resource, "the quantity that hasn't been refunded"
    /// (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.products); `nil` when none
    /// are (the last units refunded: the purchase is void) or when the purchase is not a one-time product's.
    /// Google unreachable: `unavailable`, and Pub/Sub delivers the notification again.
    private func unitsStillPaid(_ membership: MembershipInfo, token: String, productType: Int?) async throws(ReceiveFailure) -> Int? {
        guard productType != Self.productTypeSubscription else { return nil }
        let sku = membership.productId
        guard let purchase = try await fetch({ () async throws(StoreAPIError) in try await api.product(sku, purchaseToken: token) }) else { return nil }
        guard let remaining = purchase["refundableQuantity"]?.intValue else {
            // Not given: nothing says a unit is still paid for; the refund is taken as voiding the purchase.
            return nil
        }
        return remaining > 0 ? remaining : nil
    }
}
