import EntitledClient

/// An App Store subscription paid for again after a refund (`RefundSuccession`): Apple keeps the
/// subscription's `originalTransactionId` when the customer resubscribes, or when it renews after a refund
/// of its period, so the first period paid after the refund is granted as the next membership of the chain,
/// with the real `transactionId` of that period. Renewals, cancellations and refunds of the later periods
/// reach it through `RefundSuccession.newest(of:writer:)`; a redelivery, or the purchase path and the
/// notification of the same period, grant it once (the second grant names the same key).
extension AppleReceiver {
    /// Whether `transaction` is a period paid after `refunded`'s refund: one the membership does not hold,
    /// not itself refunded, bought after the refund and running past it. A period that ended before the refund is history the
    /// refunded membership already had.
    static func paysAfterRefund(_ transaction: AppleTransaction, _ refunded: MembershipInfo) -> Bool {
        guard refunded.isRevokedByRefund, transaction.revokedAt == nil, let ends = transaction.expiresAt,
            let revokedAt = refunded.revokedAt.flatMap(ProtocolTime.milliseconds)
        else { return false }
        // Bought after the refund, too: a period bought before it (its notification delayed or redelivered, or
        // its signed transaction kept by the app) is the one refunded, or an older one, even when the
        // membership never held it and Apple signed it before marking it revoked.
        guard let bought = transaction.purchasedAt, bought > revokedAt else { return false }
        return ends > revokedAt && !refunded.transactions.contains { $0.id == transaction.transactionID }
    }

    /// Grants `transaction`, a period paid after `refunded`'s refund, as a new membership of its
    /// `appAccountToken`, else of `user` (the purchase path's caller), else of the refunded membership's
    /// owner. `nil` when the transfer rule keeps the key with another user: the notification granted it
    /// already, to someone else than the purchase path's caller.
    static func grantAfterRefund(
        _ transaction: AppleTransaction, after refunded: MembershipInfo, for user: String? = nil, willRenew: Bool?, sandbox: Bool,
        reason: String, writer: inout MembershipWriter
    ) async throws(ReceiveFailure) -> MembershipInfo? {
        let owner = transaction.appAccountToken ?? user ?? refunded.user
        return try await writer.grant(
            .grant(
                user: owner, device: owner == nil ? refunded.device : nil, product: transaction.productID, source: "app_store",
                expiresAt: transaction.expiresAt.map { ProtocolTime.string(milliseconds: $0) }, willRenew: willRenew,
                periodType: transaction.isTrial ? "trial" : nil, environment: sandbox ? "sandbox" : nil,
                ownership: refunded.ownership == "family_shared" ? "family_shared" : nil, transactionId: transaction.transactionID,
                originalTransactionId: RefundSuccession.key(following: refunded, original: transaction.originalTransactionId), reason: reason
            )
        )
    }

    /// Whether `transaction` is an earlier period of `membership` than its current one: the membership holds
    /// another transaction whose period ends later. RevenueCat documents that a refund of an earlier period
    /// of a subscription does not end it (its CANCELLATION fires only for the latest period,
    /// https://www.revenuecat.com/docs/integrations/webhooks/event-types-and-fields): the period paid now is
    /// not the one refunded.
    static func isEarlierPeriod(_ transaction: AppleTransaction, of membership: MembershipInfo) -> Bool {
        guard let ends = transaction.expiresAt else { return false }
        return membership.transactions.contains { held in
            held.id != transaction.transactionID && (held.expiresAt.flatMap(ProtocolTime.milliseconds) ?? Int64.min) > ends
        }
    }
}
