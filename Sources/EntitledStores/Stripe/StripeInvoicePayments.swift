import AsyncHTTPClient
import EntitledClient

/// The one Stripe API call the receiver makes: which invoice a payment intent paid. Since API version
/// 2025-03-31 ("basil") a Charge no longer names its invoice (Stripe's changelog: "Removes the `invoice`
/// field from Charge and PaymentIntent"); the mapping lives in Invoice Payments, listed with
/// `GET /v1/invoice_payments?payment[type]=payment_intent&payment[payment_intent]=pi_...` (API reference,
/// "List all payments for an invoice"), authenticated with the account's secret or restricted key as a
/// bearer token.
struct StripeInvoicePayments: Sendable {
    /// `https://api.stripe.com`, or a stand-in's address.
    let apiURL: String
    let key: String
    let http: StoreHTTP

    /// The invoice `paymentIntent` paid, `nil` when it paid none (a payment that is not a subscription's).
    /// - Throws: `StoreHTTP.Unavailable` when Stripe does not answer, answers 429 or 5xx (the webhook is then
    ///   answered 503 and Stripe delivers it again, with its own backoff, for up to three days), or refuses
    ///   the key (401, 403: a setting to fix, after which a redelivery applies).
    func invoice(paidBy paymentIntent: String) async throws(StoreHTTP.Unavailable) -> String? {
        let query = "payment%5Btype%5D=payment_intent&payment%5Bpayment_intent%5D=\(StoreHTTP.escaped(paymentIntent))&limit=10"
        let reply: StoreHTTP.Reply
        do {
            reply = try await http.get("\(apiURL)/v1/invoice_payments?\(query)", bearer: key)
        } catch {
            throw StoreHTTP.Unavailable(reason: "the Stripe API, listing the invoice payments of \(paymentIntent): \(error.reason)")
        }
        guard reply.status == 200, let list = reply.json, let payments = list["data"]?.arrayValue else {
            let message = reply.json?["error"]?["message"]?.stringValue ?? "no JSON error"
            throw StoreHTTP.Unavailable(reason: "the Stripe API answered \(reply.status) listing the invoice payments of \(paymentIntent): \(message)")
        }
        // One invoice a payment intent pays, as subscriptions do (an invoice may have several payments,
        // a payment one invoice); a payment that is not the invoice's `paid` one refunds nothing of it.
        let paid = payments.first { $0["status"]?.stringValue == "paid" } ?? payments.first
        return paid?["invoice"]?.storeID ?? paid?["invoice"]?["id"]?.storeID
    }
}
