import EntitledStores
import Foundation

/// Stripe webhook events as Stripe builds them (the fields the receiver reads, and some it does not),
/// signed with a test secret.
enum StripeFixtures {
    static let secret = "whsec_test_5f2c1e"

    /// Seconds since the epoch, now.
    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    static func subscriptionEvent(
        _ id: String, type: String = "customer.subscription.updated", created: Int64, subscription: String = "sub_1",
        status: String = "active", periodEnd: Int64, product: String = "prod_pro", user: String? = "user_1",
        cancelAtPeriodEnd: Bool = false, cancelAt: Int64? = nil, latestInvoice: String = "in_1"
    ) -> [UInt8] {
        var metadata: [String: Any] = ["plan_note": "monthly"]
        if let user { metadata["app_user_id"] = user }
        let object: [String: Any] = [
            "id": subscription, "object": "subscription", "customer": "cus_9", "status": status, "livemode": false,
            "cancel_at_period_end": cancelAtPeriodEnd, "cancel_at": cancelAt.map { $0 as Any } ?? NSNull(), "latest_invoice": latestInvoice,
            "metadata": metadata,
            "items": ["object": "list", "data": [["id": "si_1", "current_period_end": periodEnd, "price": ["id": "price_\(product)", "product": product]]]],
        ]
        return event(id, type: type, created: created, object: object)
    }

    static func refundEvent(_ id: String, created: Int64, invoice: String, refunded: Bool = true) -> [UInt8] {
        let object: [String: Any] = [
            "id": "ch_1", "object": "charge", "amount": 999, "amount_refunded": refunded ? 999 : 100, "refunded": refunded,
            "invoice": invoice, "customer": "cus_9",
        ]
        return event(id, type: "charge.refunded", created: created, object: object)
    }

    /// A refund as API versions from 2025-03-31 ("basil") write the charge: no `invoice`, its payment intent.
    static func basilRefundEvent(_ id: String, created: Int64, paymentIntent: String, charge: String = "ch_2") -> [UInt8] {
        let object: [String: Any] = [
            "id": charge, "object": "charge", "amount": 999, "amount_refunded": 999, "refunded": true, "captured": true,
            "payment_intent": paymentIntent, "customer": "cus_9", "status": "succeeded",
        ]
        return event(id, type: "charge.refunded", created: created, object: object)
    }

    static func event(_ id: String, type: String, created: Int64, object: [String: Any]) -> [UInt8] {
        let event: [String: Any] = [
            "id": id, "object": "event", "api_version": "2025-03-31.basil", "created": created, "livemode": false, "type": type,
            "data": ["object": object], "pending_webhooks": 1,
        ]
        return Array(try! JSONSerialization.data(withJSONObject: event, options: [.sortedKeys]))
    }

    static func signed(_ body: [UInt8], secret: String = secret, at timestamp: Int64 = now) -> [String: String] {
        ["Stripe-Signature": StripeSignature.header(body: body, secret: secret, timestamp: timestamp), "Content-Type": "application/json"]
    }
}
