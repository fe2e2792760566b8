import EntitledClient

extension WhopReceiver {
    /// How much of a payment its refunds have returned, as far as a refund webhook can tell.
    enum RefundExtent: Equatable {
        /// The payment is refunded in full: its membership's access ends.
        case whole
        /// Only part of it is refunded, all refunds counted: access stays.
        case part(String)
        /// This refund returns part of the payment, and the payload does not say what earlier refunds returned.
        case unknown(String)
    }

    /// A refund (`payment.refunded`: the payment; `refund.created`: the refund, whose `payment` names it): a
    /// `refund` of the payment's membership once the payment is refunded in full (`refundExtent`).
    func refunded(_ data: JSONValue, _ context: Context) async throws(ReceiveFailure) -> NotificationOutcome {
        switch Self.refundExtent(data) {
        case .whole:
            return try await applyToPaymentsMembership(data, .refund, context)
        case .part(let reason):
            return .ignored(reason)
        case .unknown(let reason):
            // Not dropped in silence: answered and counted `unmatched`, with a warning in the log. A 503 would
            // not help: Whop retries only three times within about a minute
            // (https://docs.whop.com/developer/guides/webhooks, "Delivery guarantees"), each time with this same
            // payload, and then stops; no later delivery of this refund would say more.
            return .unmatched(reason)
        }
    }

    /// Whether a refund webhook's payment is refunded in full. Whop refunds a payment in as many parts as
    /// wanted up to its whole amount, and its payment object keeps the cumulative `refunded_amount`
    /// (https://docs.whop.com/developer/guides/refunds-and-disputes) and a `substatus` of `refunded`,
    /// `auto_refunded` or `partially_refunded` (https://docs.whop.com/api-reference/payments/payment); older
    /// payloads write `status` `refunded`. So the payment's own state decides, never one refund's `amount`
    /// (two refunds of 50 of a payment of 100 are each a part, and together the whole). A `refund.created`
    /// whose payment carries none of these (API v1's refund object embeds a payment without them:
    /// https://docs.whop.com/api-reference/refunds/refund) is whole when its own amount covers the payment's
    /// `total`, and otherwise cannot be decided. A payment with no total to compare is refunded in full, as
    /// the webhook says.
    static func refundExtent(_ data: JSONValue) -> RefundExtent {
        let isRefund = data["payment"] != nil
        let payment = data["payment"] ?? data
        switch payment["substatus"]?.stringValue {
        case "refunded", "auto_refunded": return .whole
        case "partially_refunded": return .part("the payment is refunded in part only (substatus partially_refunded): access stays")
        default: break
        }
        if payment["status"]?.stringValue == "refunded" { return .whole }
        guard let total = cents(payment["total"]) ?? cents(payment["final_amount"]), total > 0 else { return .whole }
        if let refundedSoFar = cents(payment["refunded_amount"]) {
            return refundedSoFar >= total
                ? .whole : .part("the payment is refunded in part only (\(refundedSoFar) of \(total) cents, all refunds counted): access stays")
        }
        guard isRefund, let refund = cents(data["amount"]) else { return .whole }
        if refund >= total { return .whole }
        let paymentID = payment["id"]?.storeID ?? "?"
        return .unknown(
            "refund \(data["id"]?.storeID ?? "?") returns \(refund) of payment \(paymentID)'s \(total) cents, and the payload does not say what "
                + "earlier refunds returned: access stays; if Whop shows the payment refunded in full, revoke the membership"
        )
    }

    /// An amount as Whop writes it (a decimal number, or one as text), in hundredths, so that refunds that add
    /// up to the payment compare equal to it.
    static func cents(_ value: JSONValue?) -> Int64? {
        guard let value, !value.isNull else { return nil }
        guard let number = value.doubleValue ?? value.stringValue.flatMap(Double.init), number.isFinite, abs(number) < 1e15 else { return nil }
        return Int64((number * 100).rounded())
    }
}
