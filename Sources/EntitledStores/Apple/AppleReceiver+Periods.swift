import EntitledClient

extension AppleReceiver {
    /// The events of `transaction` as a new period of `membership`, dated `time`: none when the membership
    /// holds it already (applied by the grant that created the membership, by an earlier delivery, or by the
    /// other path: a notification and `POST /purchases/apple` report the same transactions) or it has no
    /// expiry; else a `renewal` to its expiry, preceded by a `product_change` when its product is not the
    /// membership's. A renewal, a resubscription, an upgrade or crossgrade that takes effect at once and a
    /// downgrade reaching its renewal all come so: Apple keeps the originalTransactionId across product
    /// changes within a subscription group, so this is the same membership (RevenueCat: an upgrade takes
    /// effect at once with the new product, a downgrade at the next renewal).
    ///
    /// The event ids name the transaction, not the notification, so that the two paths reporting one
    /// transaction at once apply it once (`duplicate`).
    static func periodEvents(_ transaction: AppleTransaction, of membership: MembershipInfo, at time: String, reason: String) -> [EntitledRequest] {
        guard !membership.transactions.contains(where: { $0.id == transaction.transactionID }), let expiresAt = transaction.expiresAt else {
            return []
        }
        func event(_ type: EntitledEventName, expiresAt: Int64? = nil, product: String? = nil, transactionID: String? = nil) -> EntitledRequest {
            .event(
                membership: membership.id, type: type, eventId: "app_store:\(transaction.transactionID):\(type.rawValue)", eventTime: time,
                expiresAt: expiresAt.map { ProtocolTime.string(milliseconds: $0) }, product: product, transactionId: transactionID, reason: reason
            )
        }
        var events: [EntitledRequest] = []
        if transaction.productID != membership.productId { events.append(event(.productChange, product: transaction.productID)) }
        events.append(event(.renewal, expiresAt: expiresAt, transactionID: transaction.transactionID))
        return events
    }
}
