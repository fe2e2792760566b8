import EntitledClient

extension StripeAPI {
    /// The invoice `paymentIntent` paid, nil when it paid none (a payment that is not a subscription's).
    /// Since API version 2025-03-31 ("basil") a Charge no longer names its invoice (Stripe's changelog:
    /// "Removes the `invoice` field from Charge and PaymentIntent"); the mapping lives in Invoice Payments,
    /// listed with List all payments for an invoice (`GET /v1/invoice_payments?payment[type]=payment_intent&payment[payment_intent]=pi_...`,
    /// https://docs.stripe.com/api/invoice-payment/list).
    public func invoice(paidBy paymentIntent: String) async throws(StoreAPIError) -> String? {
        let call = StoreCall(store: Self.store, name: "List all invoice payments", identifier: paymentIntent)
        let path = "/v1/invoice_payments?payment%5Btype%5D=payment_intent&payment%5Bpayment_intent%5D=\(StoreHTTP.escaped(paymentIntent))&limit=10"
        let payments = try await page(call, path).data
        // One invoice a payment intent pays, as subscriptions do (an invoice may have several payments,
        // a payment one invoice); a payment that is not the invoice's `paid` one refunds nothing of it.
        let paid = payments.first { $0["status"]?.stringValue == "paid" } ?? payments.first
        return paid?["invoice"]?.storeID
    }
}
