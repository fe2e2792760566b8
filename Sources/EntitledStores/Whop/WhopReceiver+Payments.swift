import EntitledClient

extension WhopReceiver {
    /// `payment.succeeded`: the one webhook that announces a renewal. `membership.activated` (`went_valid`) is
    /// sent when a membership becomes valid, at checkout or when it is valid again after it ended
    /// (https://dev.whop.com/webhooks/examples: "typically when a membership is created or a user checks
    /// out"); a renewal of a membership that stays valid sends only its payment. So a payment of a membership
    /// `entitled` holds, made for a new period, is a `renewal` with the payment as its transaction (a
    /// redelivery, or the same payment announced again, finds it held and changes nothing).
    ///
    /// A payment is a renewal when its `billing_reason` is `subscription_cycle` (API v1's payment object:
    /// https://docs.whop.com/api-reference/refunds/refund-updated shows it, `subscription_create` for the
    /// first); without one (older payloads), when it was paid (`paid_at`, else the webhook's time) in the
    /// second half of the current period or later, since Whop charges a renewal at the period's end and the
    /// first payment at its start. The new period's end is the payment's membership's `renewal_period_end`
    /// when the payload has it; else the current end plus the plan's `billing_period` (days, older payloads);
    /// else plus the length of the period paid last (its transaction's time to its end), since a Whop plan
    /// renews every so many days. A payment that is no renewal recovers a billing issue, if any.
    func paymentSucceeded(_ data: JSONValue, _ context: Context) async throws(ReceiveFailure) -> NotificationOutcome {
        let payment = data["payment"] ?? data
        guard let membershipID = payment["membership"]?.storeID ?? payment["membership_id"]?.stringValue else {
            return .unmatched("the payment names no Whop membership")
        }
        guard let paymentID = payment["id"]?.storeID else { throw .refused(NotificationRefusal(.malformed, "the payment has no id")) }
        var writer = MembershipWriter(gateway: gateway)
        guard let membership = try await writer.membership(ofOriginalTransaction: membershipID) else {
            // Its membership.activated grants it; a payment before it is the first payment.
            return .unmatched("no membership holds Whop membership \(membershipID)")
        }
        if membership.transactions.contains(where: { $0.id == paymentID }) { return .duplicate }
        let paidAt: Int64
        do {
            paidAt = try Self.seconds(payment["paid_at"] ?? payment["created_at"], "paid_at").map { $0 * 1000 } ?? ProtocolTime.milliseconds(context.time) ?? 0
        } catch {
            throw .refused(error)
        }
        if let currentEnd = membership.expiresAt.flatMap(ProtocolTime.milliseconds), let newest = membership.transactions.last,
            let paidFrom = ProtocolTime.milliseconds(newest.time), let paidTo = newest.expiresAt.flatMap(ProtocolTime.milliseconds)
        {
            let lastPeriod = paidTo - paidFrom
            let reason = payment["billing_reason"]?.stringValue
            let isRenewal = reason.map { $0 == "subscription_cycle" } ?? (lastPeriod > 0 && paidAt >= currentEnd - lastPeriod / 2)
            if isRenewal, let newEnd = try nextPeriodEnd(payment, after: currentEnd, lastPeriod: lastPeriod), newEnd > currentEnd {
                try await writer.apply(event(membership, "renewal", expiresAt: newEnd, transaction: paymentID, context))
                return writer.outcome
            }
        }
        guard membership.billingIssueDetectedAt != nil else {
            return .ignored("payment \(paymentID) paid the membership's current period (not a renewal): nothing to change")
        }
        try await writer.apply(event(membership, "billing_recovered", context))
        return writer.outcome
    }

    /// The end of the period `payment` renewed, in milliseconds (see `paymentSucceeded`).
    private func nextPeriodEnd(_ payment: JSONValue, after currentEnd: Int64, lastPeriod: Int64) throws(ReceiveFailure) -> Int64? {
        do {
            if let end = try Self.seconds(payment["membership"]?["renewal_period_end"], "renewal_period_end") { return end * 1000 }
        } catch {
            throw .refused(error)
        }
        // `billing_period` in days (a plan "renewal" of the older payloads); a month of them at most 3660.
        if let days = payment["plan"]?["billing_period"]?.intValue, (1...3660).contains(days) {
            return currentEnd + Int64(days) * 86_400_000
        }
        return lastPeriod > 0 ? currentEnd + lastPeriod : nil
    }
}
