import EntitledClient

/// What a receiver reads of a Stripe subscription object (`data.object` of `customer.subscription.*`).
/// (https://docs.stripe.com/api/subscriptions/object)
struct StripeSubscription {
    var id: String
    /// The app's user: `metadata[<key>]`, else the Stripe customer id.
    var user: String
    /// The first item's price's product.
    var product: String
    /// `trialing`, `active`, `past_due`, `canceled`, `unpaid`, `incomplete`, `incomplete_expired`, `paused`.
    var status: String
    /// The end of the period paid for, in Unix seconds: the first item's `current_period_end` (API versions
    /// from 2025-03-31 on), else the subscription's own (earlier versions).
    var periodEnd: Int64
    /// The start of the current period (`current_period_start`, where `periodEnd` is read).
    var periodStart: Int64?
    /// Renewal is off: `cancel_at_period_end`, or a `cancel_at` date set (the subscription ends then and is not
    /// renewed past it; https://docs.stripe.com/billing/subscriptions/cancel#cancel-at).
    var cancelsAtPeriodEnd: Bool
    /// The newest invoice: the transaction of the period, which a refund of its charge names.
    var latestInvoice: String?
    var isLive: Bool
    /// `start_date`: when the subscription began (Unix seconds), the purchase time of an import.
    var startedAt: Int64?

    init(_ object: JSONValue, userMetadataKey: String) throws(NotificationRefusal) {
        guard let id = object["id"]?.stringValue, id.hasPrefix("sub_") else {
            throw NotificationRefusal(.malformed, "data.object is not a subscription (no sub_ id)")
        }
        guard let status = object["status"]?.stringValue else { throw NotificationRefusal(.malformed, "subscription \(id) has no status") }
        guard let customer = object["customer"]?.storeID else { throw NotificationRefusal(.malformed, "subscription \(id) has no customer") }
        let item = object["items"]?["data"]?.arrayValue?.first
        guard let product = item?["price"]?["product"]?.storeID ?? item?["plan"]?["product"]?.storeID else {
            throw NotificationRefusal(.malformed, "subscription \(id) has no item with a price's product")
        }
        guard let periodEnd = try StoreTime.seconds(item?["current_period_end"] ?? object["current_period_end"], "current_period_end") else {
            throw NotificationRefusal(.malformed, "subscription \(id) has no current_period_end")
        }
        self.id = id
        self.user = object["metadata"]?[userMetadataKey]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? customer
        self.product = product
        self.status = status
        self.periodEnd = periodEnd
        // Read only for a past_due subscription's paid period: one that cannot be read is not a refusal.
        self.periodStart = (try? StoreTime.seconds(item?["current_period_start"] ?? object["current_period_start"], "current_period_start")) ?? nil
        let cancelAt = object["cancel_at"].map { !$0.isNull } ?? false
        self.cancelsAtPeriodEnd = (object["cancel_at_period_end"]?.boolValue ?? false) || cancelAt
        self.latestInvoice = object["latest_invoice"]?.storeID
        self.isLive = object["livemode"]?.boolValue ?? true
        self.startedAt = try StoreTime.seconds(object["start_date"], "start_date")
    }

    /// The end of the period paid for. `past_due`: Stripe moved the period on when it invoiced the renewal
    /// and retries the charge, so what was paid for ended where the current period starts
    /// (https://docs.stripe.com/billing/subscriptions/overview#subscription-statuses); access beyond it is
    /// the billing issue's grace period, as the live receiver gives it. Otherwise the current period's end.
    var paidUntil: Int64 {
        status == "past_due" ? min(periodStart ?? periodEnd, periodEnd) : periodEnd
    }

    /// The invoice of the period paid for, when the subscription names it: a past_due subscription's newest
    /// invoice is the one whose charge failed (its payment, if it comes, is the renewal that names it).
    var paidInvoice: String? {
        status == "past_due" ? nil : latestInvoice
    }

    /// Whether the subscription shows a paid period that `membership` does not hold: `active`, its newest
    /// invoice not among the membership's transactions and its period ending after the membership's access.
    /// What gives access back after a refund revoked the membership while the subscription went on billing.
    func paysNewPeriod(after membership: MembershipInfo) -> Bool {
        guard status == "active", let invoice = latestInvoice, !membership.transactions.contains(where: { $0.id == invoice }) else { return false }
        return periodEnd * 1000 > membership.expiresAt.flatMap(ProtocolTime.milliseconds) ?? 0
    }
}
