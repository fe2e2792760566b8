import EntitledClient

extension WhopReceiver {
    /// `payment.succeeded`: the one webhook that announces a renewal. `membership.activated` (`went_valid`) is
    /// sent when a membership becomes valid, at checkout or when it is valid again after it ended
    /// (https://dev.whop.com/webhooks/examples: "typically when a membership is created or a user checks
    /// out"); a renewal of a membership that stays valid sends only its payment. So a payment of a membership
    /// `entitled` holds that pays a period after the current one is a `renewal` with the payment as its
    /// transaction (a redelivery, or the same payment announced again, finds it held and changes nothing).
    /// A payment that pays no later period recovers a billing issue, if any.
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
        if let newEnd = try renewedPeriodEnd(payment, of: membership, eventTime: ProtocolTime.milliseconds(context.time)) {
            try await writer.apply(event(membership, .renewal, expiresAt: newEnd, transaction: paymentID, context))
            return writer.outcome
        }
        guard membership.billingIssueDetectedAt != nil else {
            return .ignored("payment \(paymentID) pays no period after the membership's current one (not a renewal): nothing to change")
        }
        try await writer.apply(event(membership, .billingRecovered, context))
        return writer.outcome
    }

    /// The end of the period `payment` paid, in milliseconds, when that period comes after the current one;
    /// `nil` when the payment renews nothing.
    ///
    /// A renewal that already moved the membership on (`membership.activated` after a retried charge, which
    /// carries no payment) cannot be told from its payment by id, so the payment itself must show that it
    /// pays a later period:
    /// - Whop's own period end (the payment's membership's `renewal_period_end`, when the payload has it) is
    ///   the answer: a renewal when it is later than the current access, else nothing.
    /// - Without it (API v1's payment names its membership by id and status only:
    ///   https://docs.whop.com/api-reference/payments/payment), a payment whose `billing_reason` is given and
    ///   is not `subscription_cycle` (`subscription_create` is the checkout's) renews nothing, nor does one
    ///   of an older payload whose plan is not a `renewal` plan (`plan_type`, https://whop.readme.io/reference/paymentsucceeded).
    ///   Else the period is derived from the payment's own time (`paid_at`, else `created_at`, else the
    ///   event's): Whop charges a renewal at the period's end, so a payment made before the current period's
    ///   midpoint paid that period or an earlier one (a checkout, a retried charge whose period is already
    ///   applied, an old payment delivered late), and one made later pays until its time plus one period;
    ///   the current end plus a period is never used, since a period already applied would be paid twice.
    ///   The period is the plan's `billing_period` (days, older payloads), else the length of the period
    ///   paid last (its transaction's time to its end): a Whop plan renews every so many days.
    private func renewedPeriodEnd(_ payment: JSONValue, of membership: MembershipInfo, eventTime: Int64?) throws(ReceiveFailure) -> Int64? {
        let currentEnd = membership.expiresAt.flatMap(ProtocolTime.milliseconds)
        do {
            if let end = try Self.seconds(payment["membership"]?["renewal_period_end"], "renewal_period_end").map({ $0 * 1000 }) {
                return end > (currentEnd ?? .max) ? end : nil
            }
        } catch {
            throw .refused(error)
        }
        if let reason = payment["billing_reason"]?.stringValue, reason != "subscription_cycle" { return nil }
        if let planType = payment["plan"]?["plan_type"]?.stringValue, planType != "renewal" { return nil }
        guard let currentEnd, let period = billingPeriod(payment, membership), period > 0 else { return nil }
        let paidAt: Int64
        do {
            guard let paid = try Self.seconds(payment["paid_at"] ?? payment["created_at"], "paid_at").map({ $0 * 1000 }) ?? eventTime else { return nil }
            paidAt = paid
        } catch {
            throw .refused(error)
        }
        let derivedEnd = paidAt + period
        return paidAt >= currentEnd - period / 2 && derivedEnd > currentEnd ? derivedEnd : nil
    }

    /// The length of one period in milliseconds: the plan's `billing_period` in days (at most 3660, ten
    /// years), else the newest transaction's time to its end.
    private func billingPeriod(_ payment: JSONValue, _ membership: MembershipInfo) -> Int64? {
        if let days = payment["plan"]?["billing_period"]?.intValue, (1...3660).contains(days) { return Int64(days) * 86_400_000 }
        guard let newest = membership.transactions.last, let paidFrom = ProtocolTime.milliseconds(newest.time),
            let paidTo = newest.expiresAt.flatMap(ProtocolTime.milliseconds)
        else { return nil }
        return paidTo - paidFrom
    }
}
