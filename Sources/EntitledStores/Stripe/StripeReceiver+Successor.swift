import EntitledClient

extension StripeReceiver {
    /// The membership that holds what `subscription` says now, when `revoked` (the membership of its
    /// subscription id) was revoked by a refund.
    ///
    /// A refund in Stripe does not cancel the subscription (https://docs.stripe.com/refunds: a refund
    /// returns a charge; the subscription goes on billing unless it is canceled too), and RevenueCat warns
    /// that a refunded web subscription may still be active
    /// (https://www.revenuecat.com/docs/integrations/webhooks/event-types-and-fields, `CUSTOMER_SUPPORT`). A
    /// later paid period is a payment the customer made: it gives access again, as the next membership of
    /// the chain (`RefundSuccession`: `sub_...~2`), whose first transaction is the invoice that paid.
    ///
    /// - Returns: the newest membership of the chain (a revoked one when the subscription shows no new paid
    ///   period: its events are then answered as ignored, since it is revoked).
    func successor(
        of revoked: MembershipInfo, _ subscription: StripeSubscription, _ event: EventContext, writer: inout MembershipWriter
    ) async throws(ReceiveFailure) -> MembershipInfo {
        let newest = try await RefundSuccession.newest(of: subscription.id, writer: writer) ?? revoked
        guard newest.isRevokedByRefund else { return newest }
        guard subscription.paysNewPeriod(after: newest), let invoice = subscription.latestInvoice else { return newest }
        let granted = try await writer.grant(
            .grant(
                user: subscription.user, product: subscription.product, source: "stripe",
                expiresAt: ProtocolTime.string(milliseconds: subscription.periodEnd * 1000), willRenew: true,
                environment: subscription.isLive ? nil : "sandbox", transactionId: invoice,
                originalTransactionId: RefundSuccession.key(following: newest, original: subscription.id), reason: event.reason
            )
        )
        return granted ?? newest
    }
}
