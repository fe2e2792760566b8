import EntitledClient

extension StripeReceiver {
    /// The original transaction of the membership that holds the paid periods of `subscription` after
    /// `generation - 1` refunds revoked its earlier memberships: `sub_...~2`, `sub_...~3`, ... (the first is
    /// the subscription id itself).
    public static func successorTransaction(of subscription: String, generation: Int) -> String {
        "\(subscription)~\(generation)"
    }

    /// The Stripe subscription whose membership holds `original`: the subscription id itself, or the one a
    /// successor's original transaction (`successorTransaction(of:generation:)`) names. For asking Stripe
    /// about a membership (a reconciliation).
    public static func subscription(ofOriginalTransaction original: String) -> String {
        guard let tilde = original.lastIndex(of: "~"), Int(original[original.index(after: tilde)...]) != nil else { return original }
        return String(original[..<tilde])
    }

    /// The membership that holds what `subscription` says now, when `revoked` (the membership of its
    /// subscription id) was revoked by a refund.
    ///
    /// A refund in Stripe does not cancel the subscription (https://docs.stripe.com/refunds: a refund
    /// returns a charge; the subscription goes on billing unless it is canceled too), and RevenueCat warns
    /// that a refunded web subscription may still be active
    /// (https://www.revenuecat.com/docs/integrations/webhooks/event-types-and-fields, `CUSTOMER_SUPPORT`). A
    /// later paid period is a payment the customer made: it gives access again. `entitled` keeps a revocation
    /// final, so the paid periods after it are a new membership of the same user and product, whose original
    /// transaction is the subscription id with a generation (`sub_...~2`) and whose first transaction is the
    /// invoice that paid. The chain is followed to its newest membership; a further refund starts another.
    ///
    /// - Returns: the newest membership of the chain (a revoked one when the subscription shows no new paid
    ///   period: its events are then answered as ignored, since it is revoked).
    func successor(
        of revoked: MembershipInfo, _ subscription: StripeSubscription, _ event: EventContext, writer: inout MembershipWriter
    ) async throws(ReceiveFailure) -> MembershipInfo {
        var newest = revoked
        var generation = 2
        while let next = try await writer.membership(ofOriginalTransaction: Self.successorTransaction(of: subscription.id, generation: generation)) {
            newest = next
            guard next.revokedByRefund else { return next }
            generation += 1
        }
        guard subscription.paysNewPeriod(after: newest), let invoice = subscription.latestInvoice else { return newest }
        let granted = try await writer.grant(
            .grant(
                user: subscription.user, product: subscription.product, source: "stripe",
                expiresAt: ProtocolTime.string(milliseconds: subscription.periodEnd * 1000), willRenew: true,
                environment: subscription.isLive ? nil : "sandbox", transactionId: invoice,
                originalTransactionId: Self.successorTransaction(of: subscription.id, generation: generation), reason: event.reason
            )
        )
        return granted ?? newest
    }
}

extension MembershipInfo {
    /// Revoked by a store's refund (a `refund` event), not by an operator's `revoke`.
    var revokedByRefund: Bool { revokedAt != nil && reason == "refund" }
}
