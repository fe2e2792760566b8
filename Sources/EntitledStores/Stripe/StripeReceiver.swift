import AsyncHTTPClient
import EntitledClient

/// Stripe's webhook events, verified and applied (https://docs.stripe.com/api/events):
///
/// - `customer.subscription.created|updated|deleted|paused|resumed`: the subscription is a membership whose
///   original transaction is the subscription id (`sub_...`) and whose transactions are its invoices.
///   A subscription not seen before is granted (to `metadata[<user key>]`, else the customer id; product
///   = the first item's price's product; expiry = its `current_period_end`); then its state becomes
///   events: a later period end a `renewal`, `past_due` a `billing_issue` with a grace period, back to
///   `active` a `billing_recovered`, `cancel_at_period_end` a `cancellation` (and back, `uncancellation`),
///   `canceled`/`unpaid`/`incomplete_expired` an `expiration`, `paused` a `pause`, paused to active a
///   `resume`, another product a `product_change`. A subscription whose metadata names another user is
///   granted to that user: the server's transfer rule decides.
/// - `charge.refunded` (fully refunded): a `refund` of the membership holding the charge's invoice, named in
///   the charge by API versions before 2025-03-31 and found through its payment intent's invoice payments
///   since (`StripeAPI.invoice(paidBy:)`). A refund whose membership does not exist yet is kept and tried again.
///
/// Every write is idempotent: the event's id (with the kind of change) is the event id, a grant names the
/// subscription, so a redelivered event changes nothing. Order: `entitled` ignores an event older than the
/// newest it applied to the membership; all writes of one Stripe event carry its `created` time, with a
/// millisecond from its id (`tieBreak`), so events of the same second are ordered by id.
public struct StripeReceiver: Sendable {
    public struct Settings: Sendable, Hashable {
        /// The endpoint's signing secrets (`whsec_...`): several while one replaces another.
        public var secrets: [String]
        /// The subscription metadata key that holds the app's user id.
        public var userMetadataKey: String
        /// How long access continues after a failed renewal (`past_due`), from the end of the paid period.
        public var gracePeriodDays: Int
        /// How far the signature's time may be from now, in seconds.
        public var tolerance: Int64
        /// A secret or restricted key of the account, to find the invoice of a refunded charge
        /// (`StripeAPI.invoice(paidBy:)`); without it such a refund is answered 503 until one is given.
        public var apiKey: String?
        /// The Stripe API's address: `https://api.stripe.com`, or a stand-in's.
        public var apiURL: String

        public init(
            secrets: [String], userMetadataKey: String = "app_user_id", gracePeriodDays: Int = 7, tolerance: Int64 = StripeSignature.defaultTolerance,
            apiKey: String? = nil, apiURL: String = "https://api.stripe.com"
        ) {
            self.secrets = secrets
            self.userMetadataKey = userMetadataKey
            self.gracePeriodDays = gracePeriodDays
            self.tolerance = tolerance
            self.apiKey = apiKey
            self.apiURL = apiURL
        }
    }

    public let settings: Settings
    let gateway: any EntitledGateway
    /// The Stripe API, tried once (a refund it cannot resolve now is answered 503, and Stripe delivers it
    /// again with its own backoff, for up to three days); nil without an API key.
    let api: StripeAPI?

    public init(settings: Settings, gateway: any EntitledGateway, httpClient: HTTPClient = .shared) {
        self.settings = settings
        self.gateway = gateway
        api = settings.apiKey.map { StripeAPI(secretKey: $0, apiURL: settings.apiURL, policy: .once, httpClient: httpClient) }
    }

    /// Verifies and applies one webhook request; `now` in Unix seconds.
    public func receive(body: [UInt8], signature: String?, now: Int64) async throws(ReceiveFailure) -> NotificationOutcome {
        do {
            try StripeSignature.verify(header: signature, body: body, secrets: settings.secrets, now: now, tolerance: settings.tolerance)
        } catch {
            throw .refused(error)
        }
        return try await receive(verifiedBody: body)
    }

    /// Applies an event whose signature was verified when it arrived: a kept one tried again
    /// (`UnmatchedNotifications`), whose signature's time is long past the tolerance by then.
    public func receive(verifiedBody body: [UInt8]) async throws(ReceiveFailure) -> NotificationOutcome {
        guard let event = JSONValue(strictUTF8: body) else {
            throw .refused(NotificationRefusal(.malformed, "the body is not JSON"))
        }
        let created: Int64?
        do {
            created = try StoreTime.seconds(event["created"], "created")
        } catch {
            throw .refused(error)
        }
        guard let id = event["id"]?.stringValue, let type = event["type"]?.stringValue, let created,
            let object = event["data"]?["object"]
        else { throw .refused(NotificationRefusal(.malformed, "not a Stripe event: id, type, created or data.object is missing")) }
        let milliseconds = created * 1000 + Self.tieBreak(id)
        let context = EventContext(id: id, type: type, time: ProtocolTime.string(milliseconds: milliseconds), created: created)
        switch type {
        case "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted",
            "customer.subscription.paused", "customer.subscription.resumed":
            let subscription: StripeSubscription
            do {
                subscription = try StripeSubscription(object, userMetadataKey: settings.userMetadataKey)
            } catch {
                throw .refused(error)
            }
            return try await subscriptionChanged(subscription, context)
        case "charge.refunded":
            return try await chargeRefunded(object, context)
        default:
            return .ignored("Stripe event type \(type) is not one this receiver acts on")
        }
    }

    /// Stripe's `created` is in seconds; two events of one second are ordered by their ids: the id's first
    /// two characters after `evt_` (base 62, in ASCII order) give a millisecond within the second that
    /// grows with the id, so `entitled`'s ordering by event time applies them in id order whatever order
    /// they arrive in (ids sharing those characters keep their arrival order).
    static func tieBreak(_ id: String) -> Int64 {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        let characters = Array(id.hasPrefix("evt_") ? id.dropFirst(4) : Substring(id))
        func digit(_ index: Int) -> Int64 {
            guard index < characters.count, let value = alphabet.firstIndex(of: characters[index]) else { return 0 }
            return Int64(value)
        }
        return (digit(0) * 62 + digit(1)) * 1000 / (62 * 62)
    }

    struct EventContext {
        var id: String
        var type: String
        var time: String
        var created: Int64
        /// An import or a reconciliation (`StateSync`): its reason, and the grant's original purchase time.
        var sync: StateSync?

        func eventID(_ kind: EntitledEventName) -> String { "\(id):\(kind.rawValue)" }
        var reason: String { sync?.reason ?? "stripe \(type) \(id)" }
    }

    private func subscriptionChanged(_ subscription: StripeSubscription, _ event: EventContext) async throws(ReceiveFailure) -> NotificationOutcome {
        try await bring(subscription, event).outcome
    }

    /// Brings the membership of `subscription` to its state: granted when no membership holds it (with its
    /// start as the purchase time for an import), then the events of `events(for:membership:_:)`.
    func bring(_ subscription: StripeSubscription, _ event: EventContext) async throws(ReceiveFailure) -> StateSyncOutcome {
        var writer = MembershipWriter(gateway: gateway)
        // The grant is the lookup: a purchase a membership of the same user holds is answered with it and
        // changes nothing (Purchases reported twice, PROTOCOL.md), one round trip where a lookup and then a
        // grant took two. Only a subscription not paid yet is looked up first, since it must not be granted.
        var found: MembershipInfo?
        if ["incomplete", "incomplete_expired"].contains(subscription.status) {
            found = try await writer.membership(ofOriginalTransaction: subscription.id)
            if found == nil {
                return StateSyncOutcome(
                    outcome: .ignored("subscription \(subscription.id) is \(subscription.status): no access before its first payment"), membership: nil
                )
            }
        }
        if found == nil || found?.user != subscription.user {
            // A new subscription, or one whose metadata now names another user (the transfer rule decides).
            // One that has not ended renewed from its start: set to cancel at its period's end, the events
            // below cancel it (`unsubscribeDetectedAt`, status `canceled`) as the update that set it would have.
            let ended = ["canceled", "unpaid", "incomplete_expired"].contains(subscription.status)
            let granted = try await writer.grant(
                .grant(
                    user: subscription.user, product: subscription.product, source: "stripe",
                    expiresAt: ProtocolTime.string(milliseconds: subscription.paidUntil * 1000),
                    willRenew: !ended, periodType: subscription.status == "trialing" ? "trial" : nil,
                    environment: subscription.isLive ? nil : "sandbox", transactionId: subscription.paidInvoice ?? subscription.id,
                    originalTransactionId: subscription.paidInvoice == nil ? nil : subscription.id, reason: event.reason
                ).imported(purchasedAt: event.sync == nil ? nil : subscription.startedAt.map { $0 * 1000 }, renewsCount: nil)
            )
            // Refused (another user holds it, and the transfer rule keeps it there): its events still apply.
            if let granted {
                found = granted
            } else {
                found = try await writer.membership(ofOriginalTransaction: subscription.id)
            }
        }
        guard let held = found else {
            return StateSyncOutcome(
                outcome: .unmatched("subscription \(subscription.id) belongs to another user, and the transfer rule keeps it there"), membership: nil
            )
        }
        // Revoked by a refund while the subscription went on billing: its later paid periods are a membership
        // of their own (`successor(of:_:_:writer:)`).
        var membership = held.isRevokedByRefund ? try await successor(of: held, subscription, event, writer: &writer) : held
        guard membership.revokedAt == nil else {
            // Said, not answered `duplicate`: the event may be new, and nothing it says applies to a revoked
            // membership (`entitled` would ignore each event, if the state led to any).
            return StateSyncOutcome(
                outcome: .ignored("the membership of this purchase is revoked (refunded or taken back), which later events do not change"),
                membership: membership, changes: writer.appliedKinds
            )
        }
        for request in events(for: subscription, membership: membership, event) {
            membership = try await writer.apply(request) ?? membership
        }
        return StateSyncOutcome(outcome: writer.outcome, membership: membership, changes: writer.appliedKinds)
    }

    /// The events that bring `membership` to the state `subscription` describes.
    func events(for subscription: StripeSubscription, membership: MembershipInfo, _ event: EventContext) -> [EntitledRequest] {
        var events: [EntitledRequest] = []
        func add(_ type: EntitledEventName, expiresAt: Int64? = nil, grace: Int64? = nil, product: String? = nil, transaction: String? = nil) {
            events.append(
                .event(
                    membership: membership.id, type: type, eventId: event.eventID(type), eventTime: event.time,
                    expiresAt: expiresAt.map { ProtocolTime.string(milliseconds: $0) },
                    gracePeriodExpiresAt: grace.map { ProtocolTime.string(milliseconds: $0) }, product: product,
                    transactionId: transaction, reason: event.reason
                )
            )
        }
        let currentEnd = membership.expiresAt.flatMap(ProtocolTime.milliseconds) ?? 0
        let periodEnd = subscription.periodEnd * 1000
        let movedOn = periodEnd > currentEnd
        // The newest invoice, unless the membership holds it already (the state as a reconciliation reads it
        // may name an invoice the grant recorded): the transaction of a renewal or of a plan change.
        let newInvoice = subscription.latestInvoice.flatMap { id in membership.transactions.contains { $0.id == id } ? nil : id }
        var willRenew = membership.willRenew
        if subscription.product != membership.productId {
            // An upgrade, downgrade or crossgrade changes the item's price at once, prorated; one deferred to
            // the period's end (a subscription schedule) shows only when its phase begins
            // (https://docs.stripe.com/billing/subscriptions/change-price, .../subscription-schedules). So the
            // product moves when the subscription shows it. A proration invoiced at once (`always_invoice`)
            // is the change's transaction, so that a refund of it finds the membership; with a new period
            // (the billing interval changed, which resets the anchor) the renewal below takes the invoice.
            let paidNow = subscription.status == "active" && !movedOn ? newInvoice : nil
            add(.productChange, product: subscription.product, transaction: paidNow)
        }
        switch subscription.status {
        case "active", "trialing":
            if membership.pausedAt != nil {
                // Resumed (https://docs.stripe.com/api/subscriptions/resume): by default a new period starts
                // then, paid at once: the renewal below, which records its invoice.
                add(.resume, expiresAt: movedOn ? nil : periodEnd)
            }
            if movedOn, subscription.status == "trialing", membership.periodType == "trial" {
                // A trial extended (its trial_end moved; Stripe's period ends with it): still a trial, no
                // payment, no renewal. The trial's end with a payment is an `active` subscription whose
                // period moved on: the renewal below.
                add(.extension, expiresAt: periodEnd)
            } else if movedOn {
                add(.renewal, expiresAt: periodEnd, transaction: newInvoice)
                willRenew = true
            } else if membership.billingIssueDetectedAt != nil {
                add(.billingRecovered)
            }
            if subscription.cancelsAtPeriodEnd, willRenew {
                add(.cancellation)
            } else if !subscription.cancelsAtPeriodEnd, !willRenew {
                add(.uncancellation)
            }
        case "past_due":
            // Stripe has moved the period on and is retrying the charge: access goes on for the grace
            // period after the end of the period that was paid for.
            if membership.billingIssueDetectedAt == nil {
                let graceFrom = currentEnd > 0 ? currentEnd : event.created * 1000
                add(.billingIssue, grace: graceFrom + Int64(settings.gracePeriodDays) * 86_400_000)
            }
        case "canceled", "unpaid", "incomplete_expired":
            // Also when its access ran out by time while it was still to renew: the expiration ends the
            // renewal too, as the App Store's does.
            if membership.status != "expired" || membership.willRenew, membership.revokedAt == nil { add(.expiration) }
        case "paused":
            if membership.pausedAt == nil { add(.pause) }
        default:
            break
        }
        return events
    }

    private func chargeRefunded(_ charge: JSONValue, _ event: EventContext) async throws(ReceiveFailure) -> NotificationOutcome {
        guard let chargeID = charge["id"]?.stringValue else { throw .refused(NotificationRefusal(.malformed, "data.object is not a charge (no id)")) }
        guard charge["refunded"]?.boolValue == true else {
            return .ignored("charge \(chargeID) is refunded in part only: access stays")
        }
        guard let invoice = try await invoice(of: charge, chargeID) else {
            return .ignored("charge \(chargeID) paid no invoice, so no subscription")
        }
        var writer = MembershipWriter(gateway: gateway)
        guard let membership = try await writer.membership(ofTransaction: invoice) else {
            // Kept and tried again: a refund that came before its subscription's grant must not be lost,
            // or the refunded customer keeps access.
            return .awaitingPurchase(originalTransaction: invoice, reason: "no membership holds invoice \(invoice) of charge \(chargeID)")
        }
        // A refund of a period that is over takes nothing away: the access now is paid by a later invoice,
        // not refunded (RevenueCat, too, leaves a Stripe refund after the billing cycle ended unapplied:
        // https://www.revenuecat.com/docs/subscription-guidance/refunds). Decided by the period the invoice
        // paid, not by whether it is the membership's last transaction: a plan change's proration invoice
        // comes after the period's own and pays the same period, whose refund still ends it.
        if let paidUntil = membership.transactions.first(where: { $0.id == invoice })?.expiresAt.flatMap(ProtocolTime.milliseconds),
            let access = membership.expiresAt.flatMap(ProtocolTime.milliseconds), paidUntil < access,
            let later = membership.transactions.last(where: { ($0.expiresAt.flatMap(ProtocolTime.milliseconds) ?? Int64.min) > paidUntil })?.id
        {
            return .ignored("invoice \(invoice) paid a period that is over; the access now is paid by invoice \(later), which is not refunded")
        }
        try await writer.apply(
            .event(membership: membership.id, type: .refund, eventId: event.eventID(.refund), eventTime: event.time, transactionId: invoice, reason: event.reason)
        )
        return writer.outcome
    }
}

extension StripeReceiver {
    /// The invoice `charge` paid: named in the charge by API versions before 2025-03-31, else found through
    /// its payment intent's invoice payments. `nil` when it paid none.
    /// - Throws: `unavailable` when only the API can tell and it does not answer, or no API key is set.
    func invoice(of charge: JSONValue, _ chargeID: String) async throws(ReceiveFailure) -> String? {
        if let invoice = charge["invoice"]?.storeID { return invoice }
        guard let paymentIntent = charge["payment_intent"]?.storeID else { return nil }
        guard let api else {
            throw .unavailable(
                EntitledUnavailable(
                    "charge \(chargeID) names no invoice (API versions from 2025-03-31 do not): give --stripe-api-key-file so the receiver can ask Stripe; the refund is applied at Stripe's next delivery"
                )
            )
        }
        do throws(StoreAPIError) {
            return try await api.invoice(paidBy: paymentIntent)
        } catch {
            // Not answering, 429, 5xx, or a key refused (401: a setting to fix, after which a redelivery applies).
            throw .unavailable(EntitledUnavailable("the Stripe API: \(error)"))
        }
    }
}

extension StripeReceiver {
    /// Whether a membership holds `invoice` among its transactions: asked of `entitled` before a kept refund
    /// is tried again, so that a waiting one costs no Stripe API call.
    public func isGranted(invoice: String) async throws(ReceiveFailure) -> Bool {
        try await MembershipWriter(gateway: gateway).membership(ofTransaction: invoice) != nil
    }
}
