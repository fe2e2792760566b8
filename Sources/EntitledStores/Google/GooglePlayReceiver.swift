import AsyncHTTPClient
import EntitledClient
import Foundation

/// Google Play's real-time developer notifications (`POST /google`), pushed by Pub/Sub: the push's bearer
/// token is verified when an audience is configured (`GooglePushVerifier`); the notification itself carries
/// no expiry, so the purchase's state is fetched from the Play Developer API
/// (`purchases.subscriptionsv2.get`, `purchases.products.get`) with the service account's OAuth token, and
/// the membership is brought to it:
///
/// - a subscription is the membership whose original transaction is its purchase token (or the
///   `linkedPurchaseToken` it replaced) and whose transactions are its order ids; one not seen before is
///   granted to `externalAccountIdentifiers.obfuscatedExternalAccountId` (product, expiry, auto-renewal, a
///   test purchase as sandbox). `ACTIVE` with a later expiry: `renewal`; `IN_GRACE_PERIOD`: `billing_issue`
///   until the line item's expiry; `ON_HOLD`: `billing_issue` without grace (access ends); back to
///   `ACTIVE`: `billing_recovered`; auto-renewal off or `CANCELED`: `cancellation`, on again
///   `uncancellation`; `PAUSED`: `pause`, then `resume`; `EXPIRED`: `expiration`; another product:
///   `product_change`; a later expiry without a new order (`SUBSCRIPTION_DEFERRED`): `extension`.
/// - a one-time product purchased (`purchaseState` 0): a lifetime grant.
/// - a purchase granted from its notification that Google still waits to have acknowledged: acknowledged
///   once the grant is durable (`GooglePlayReceiver+Acknowledgement`).
/// - a voided purchase (`voidedPurchaseNotification`, a refund or chargeback): `refund`
///   (`GooglePlayReceiver+Voided`).
/// - a `pendingRefundReviewNotification` or a `testNotification`: 200, logged.
///
/// The Pub/Sub message id (with the kind of change) is the event id, the notification's `eventTimeMillis`
/// the event time.
public struct GooglePlayReceiver: Sendable {
    public struct Settings: Sendable, Hashable {
        /// The app's package name: notifications for another app are refused.
        public var packageName: String
        /// The service account's JSON key (its contents).
        public var serviceAccountJSON: String
        /// With an audience, the push's bearer token must be Google's, for it.
        public var pushAudience: String?
        /// With an audience, the push's service account, when given.
        public var pushEmail: String?
        /// The Play Developer API, the OAuth token endpoint (default: the key's `token_uri`), and Google's
        /// signing keys; other URLs for a test's stand-in.
        public var apiURL: String
        public var tokenURL: String?
        public var certificatesURL: String

        public init(
            packageName: String, serviceAccountJSON: String, pushAudience: String? = nil, pushEmail: String? = nil,
            apiURL: String = "https://androidpublisher.googleapis.com", tokenURL: String? = nil,
            certificatesURL: String = "https://www.googleapis.com/oauth2/v3/certs"
        ) {
            self.packageName = packageName
            self.serviceAccountJSON = serviceAccountJSON
            self.pushAudience = pushAudience
            self.pushEmail = pushEmail
            self.apiURL = apiURL.hasSuffix("/") ? String(apiURL.dropLast()) : apiURL
            self.tokenURL = tokenURL
            self.certificatesURL = certificatesURL
        }
    }

    public let settings: Settings
    let gateway: any EntitledGateway
    /// The Play Developer API, tried once: a notification whose purchase cannot be read now is answered
    /// 503, and Pub/Sub delivers it again with its own backoff.
    let api: GooglePlayAPI
    let push: GooglePushVerifier?

    public init(settings: Settings, gateway: any EntitledGateway, httpClient: HTTPClient = .shared) throws(NotificationRefusal) {
        self.settings = settings
        self.gateway = gateway
        let account = try GoogleServiceAccount(json: settings.serviceAccountJSON)
        api = GooglePlayAPI(
            packageName: settings.packageName, serviceAccount: account, apiURL: settings.apiURL, tokenURL: settings.tokenURL, policy: .once,
            httpClient: httpClient
        )
        let http = StoreHTTP(client: httpClient)
        push = settings.pushAudience.map { GooglePushVerifier(audience: $0, email: settings.pushEmail, certificatesURL: settings.certificatesURL, http: http) }
    }

    public func receive(body: [UInt8], authorization: String?, now: Int64) async throws(ReceiveFailure) -> NotificationOutcome {
        if let push { try await push.verify(authorization: authorization, now: now) }
        return try await receive(verifiedBody: body, now: now)
    }

    /// Applies a push whose bearer token was verified when it arrived: a kept notification tried again
    /// (`UnmatchedNotifications`), whose token has expired since. The purchase is read from the Play
    /// Developer API again, as it is now.
    public func receive(verifiedBody body: [UInt8], now: Int64) async throws(ReceiveFailure) -> NotificationOutcome {
        guard let envelope = JSONValue(strictUTF8: body), let message = envelope["message"],
            let messageID = message["messageId"]?.stringValue ?? message["message_id"]?.stringValue, let encoded = message["data"]?.stringValue
        else { throw .refused(NotificationRefusal(.malformed, "not a Pub/Sub push: message.messageId or message.data is missing")) }
        guard let decoded = Data(base64Encoded: encoded), let notification = JSONValue(strictUTF8: decoded) else {
            throw .refused(NotificationRefusal(.malformed, "message.data is not base64 of a JSON developer notification"))
        }
        let package = notification["packageName"]?.stringValue
        guard package == settings.packageName else {
            throw .refused(NotificationRefusal(.wrongApp, "the notification is for package \(package ?? "(none)"), not \(settings.packageName)"))
        }
        // Google writes it as a string of digits; a number is taken too.
        let eventMillis: Int64
        do throws(NotificationRefusal) {
            if let text = notification["eventTimeMillis"]?.stringValue {
                guard let number = Int64(text) else { throw NotificationRefusal(.malformed, "eventTimeMillis is not a whole number") }
                eventMillis = try StoreTime.milliseconds(number, "eventTimeMillis")
            } else {
                eventMillis = try StoreTime.milliseconds(notification["eventTimeMillis"], "eventTimeMillis") ?? now * 1000
            }
        } catch {
            throw .refused(error)
        }
        let context = Context(messageID: messageID, time: ProtocolTime.string(milliseconds: eventMillis), now: now)
        if notification["testNotification"] != nil { return .ignored("a test notification") }
        if let subscription = notification["subscriptionNotification"], let token = subscription["purchaseToken"]?.stringValue {
            return try await subscriptionChanged(token: token, type: subscription["notificationType"]?.intValue ?? 0, context)
        }
        if let product = notification["oneTimeProductNotification"], let token = product["purchaseToken"]?.stringValue,
            let sku = product["sku"]?.stringValue
        {
            return try await productPurchased(token: token, sku: sku, context)
        }
        if let voided = notification["voidedPurchaseNotification"], let token = voided["purchaseToken"]?.stringValue {
            return try await purchaseVoided(
                token: token, orderID: voided["orderId"]?.stringValue, productType: voided["productType"]?.intValue,
                refundType: voided["refundType"]?.intValue, context
            )
        }
        if notification["pendingRefundReviewNotification"] != nil {
            // A chargeback Google asks the developer's view of (orders.reviewrefund, within 24 hours): a
            // question, not a refund. Access ends when the voided purchase notification says the money went back.
            return .ignored("a pending refund review: access changes only if the refund is granted (its voided purchase notification)")
        }
        return .ignored("a developer notification of a kind this receiver does not act on")
    }

    struct Context {
        var messageID: String
        var time: String
        var now: Int64
        /// An import or a reconciliation (`StateSync`): its reason, and the grant's history.
        var sync: StateSync?

        func eventID(_ kind: EntitledEventName) -> String { "\(messageID):\(kind.rawValue)" }
        var reason: String { sync?.reason ?? "google_play \(messageID)" }
    }

    /// Reads a purchase from the Play Developer API; `nil` when Google does not know it (404, 410). Any
    /// other failure, its quota's 429 (https://developers.google.com/android-publisher/quotas) included,
    /// is `unavailable`: the store delivers the notification again later, by when the API may answer.
    func fetch(_ read: () async throws(StoreAPIError) -> JSONValue) async throws(ReceiveFailure) -> JSONValue? {
        do throws(StoreAPIError) {
            return try await read()
        } catch where error.kind == .notFound {
            return nil
        } catch {
            throw .unavailable(EntitledUnavailable("the Play Developer API: \(error)"))
        }
    }

    private func subscriptionChanged(token: String, type: Int, _ context: Context) async throws(ReceiveFailure) -> NotificationOutcome {
        guard let purchase = try await fetch({ () async throws(StoreAPIError) in try await api.subscription(purchaseToken: token) }) else {
            return .unmatched("Google Play does not know the purchase token of this notification")
        }
        let user = purchase["externalAccountIdentifiers"]?["obfuscatedExternalAccountId"]?.stringValue
        let synced = try await bringSubscription(purchase, token: token, user: user, notificationType: type, context)
        try await acknowledgeIfGranted(subscription: purchase, token: token, synced)
        return synced.outcome
    }

    /// `SUBSCRIPTION_REVOKED`: Google took the subscription back before its end (a refund, a chargeback). The
    /// state reads `SUBSCRIPTION_STATE_EXPIRED` then, which alone would be an expiry; it is a `refund`, as
    /// RevenueCat treats it (the voided purchase notification that may follow is then a duplicate).
    static let subscriptionRevoked = 12

    /// Brings the membership of subscription `token` to what `purchase` (its `subscriptionsv2` resource)
    /// says, granting it to `user` first when no membership holds it, or when it names another user (a
    /// restore on another account: the server's transfer rule decides).
    func applySubscription(_ purchase: JSONValue, token: String, user: String?, _ context: Context) async throws(ReceiveFailure) -> NotificationOutcome {
        try await bringSubscription(purchase, token: token, user: user, context).outcome
    }

    /// `applySubscription`, with the membership and the writes it made.
    /// - Parameter notificationType: the `subscriptionNotification`'s, when a notification asks; only
    ///   `SUBSCRIPTION_REVOKED` says more than the state.
    func bringSubscription(
        _ purchase: JSONValue, token: String, user: String?, notificationType: Int? = nil, _ context: Context
    ) async throws(ReceiveFailure) -> StateSyncOutcome {
        let revoked = notificationType == Self.subscriptionRevoked
        func finished(_ outcome: NotificationOutcome, _ membership: MembershipInfo? = nil, _ writer: MembershipWriter? = nil) -> StateSyncOutcome {
            StateSyncOutcome(outcome: outcome, membership: membership, changes: writer?.appliedKinds ?? [])
        }
        guard let item = purchase["lineItems"]?.arrayValue?.first, let product = item["productId"]?.stringValue else {
            throw .refused(NotificationRefusal(.malformed, "the subscription purchase has no line item with a productId"))
        }
        let state = purchase["subscriptionState"]?.stringValue ?? ""
        let expiry = item["expiryTime"]?.stringValue.flatMap(ProtocolTime.rfc3339Milliseconds)
        let autoRenews = item["autoRenewingPlan"]?["autoRenewEnabled"]?.boolValue ?? false
        let order = purchase["latestOrderId"]?.stringValue ?? token
        var writer = MembershipWriter(gateway: gateway)
        var found = try await writer.membership(ofOriginalTransaction: token)
        // A purchase replacing the one the membership holds (a plan change, a re-signup before the end).
        var replacing = false
        if found == nil, let linked = purchase["linkedPurchaseToken"]?.stringValue {
            found = try await writer.membership(ofOriginalTransaction: linked)
            replacing = found != nil
        }
        if found == nil, let firstOrder = Self.firstOrder(of: order) {
            // Imported from an export that named order ids, not purchase tokens (RevenueCat's): the first
            // order (`GPA.1234-5678-9012-34567`, renewals add `..N`) is its original transaction.
            found = try await writer.membership(ofOriginalTransaction: firstOrder)
        }
        if found == nil || (user != nil && found?.user != user) {
            if found == nil, state == "SUBSCRIPTION_STATE_PENDING" { return finished(.ignored("the subscription's payment is pending: no access yet")) }
            if found == nil, state == "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED" {
                return finished(.ignored("the pending purchase was canceled before it was paid: nothing to grant"))
            }
            guard let user else {
                // Kept, as the App Store's are, until a grant names the purchase token (the app's backend at
                // purchase time): dropped, a renewal or refund of it would be lost for good.
                return finished(
                    .awaitingPurchase(
                        originalTransaction: token, reason: "no membership holds this purchase, and it names no obfuscatedExternalAccountId"
                    )
                )
            }
            // A canceled subscription renewed until it was canceled: granted renewing, the events below
            // cancel it (`unsubscribeDetectedAt`, status `canceled`) as SUBSCRIPTION_CANCELED would have.
            let granted = try await writer.grant(
                .grant(
                    user: user, product: product, source: "play_store", expiresAt: expiry.map { ProtocolTime.string(milliseconds: $0) },
                    willRenew: autoRenews || state == "SUBSCRIPTION_STATE_CANCELED", environment: purchase["testPurchase"] != nil ? "sandbox" : nil, transactionId: order,
                    originalTransactionId: order == token ? nil : token, reason: context.reason
                ).imported(
                    purchasedAt: context.sync == nil ? nil : purchase["startTime"]?.stringValue.flatMap(ProtocolTime.rfc3339Milliseconds),
                    renewsCount: context.sync == nil ? nil : Self.renewals(inOrder: order)
                )
            )
            found = granted ?? found
        }
        guard var membership = found else { return finished(.unmatched("this purchase belongs to another user, and the transfer rule keeps it there")) }
        // A plan change (upgrade, downgrade) is a new purchase token naming the old one as its
        // `linkedPurchaseToken`; the membership follows the new one from then on. The old token then reads
        // `EXPIRED` (https://developer.android.com/google/play/billing/subscriptions#upgrade-downgrade): its
        // notifications must not end the access the new one pays for. Its last order is one the membership
        // holds, but no longer the newest.
        if let newest = membership.transactions.last?.id, newest != order, membership.transactions.contains(where: { $0.id == order }) {
            return finished(.ignored("purchase token \(token) was replaced by a newer purchase (a plan change), which the membership follows"), membership)
        }
        if revoked {
            guard membership.revokedAt == nil else { return finished(writer.outcome, membership, writer) }
            membership =
                try await writer.apply(
                    .event(membership: membership.id, type: .refund, eventId: context.eventID(.refund), eventTime: context.time, transactionId: order, reason: context.reason)
                ) ?? membership
            return finished(writer.outcome, membership, writer)
        }
        // A price change, a pause scheduled, a consent asked for: no event, and the notification is a
        // `duplicate` (what it points to, the state, the membership has already).
        let requests = events(
            membership: membership, state: state, product: product, expiry: expiry, autoRenews: autoRenews, order: order, token: token,
            replacing: replacing, context
        )
        for request in requests {
            membership = try await writer.apply(request) ?? membership
        }
        return finished(writer.outcome, membership, writer)
    }

    /// The first order of a subscription whose order is `order`: Google's renewals add `..N` to it
    /// (https://developer.android.com/google/play/billing/subscriptions: "GPA.1234-5678-9012-34567..0" for
    /// the first renewal); `nil` when `order` is not one of Google's.
    static func firstOrder(of order: String) -> String? {
        guard order.hasPrefix("GPA.") else { return nil }
        guard let range = order.range(of: "..", options: .backwards) else { return order }
        return String(order[..<range.lowerBound])
    }

    /// The renewals the order id counts: `..0` is the first renewal, so `..N` is N + 1 of them.
    static func renewals(inOrder order: String) -> Int? {
        guard order.hasPrefix("GPA."), let range = order.range(of: "..", options: .backwards), let number = Int(order[range.upperBound...]) else { return nil }
        return number + 1
    }

    func events(
        membership: MembershipInfo, state: String, product: String, expiry: Int64?, autoRenews: Bool, order: String, token: String,
        replacing: Bool = false, _ context: Context
    ) -> [EntitledRequest] {
        var events: [EntitledRequest] = []
        func add(_ type: EntitledEventName, expiresAt: Int64? = nil, grace: Int64? = nil, product: String? = nil, transaction: String? = nil) {
            events.append(
                .event(
                    membership: membership.id, type: type, eventId: context.eventID(type), eventTime: context.time,
                    expiresAt: expiresAt.map { ProtocolTime.string(milliseconds: $0) }, gracePeriodExpiresAt: grace.map { ProtocolTime.string(milliseconds: $0) },
                    product: product, transactionId: transaction, reason: context.reason
                )
            )
        }
        let currentEnd = membership.expiresAt.flatMap(ProtocolTime.milliseconds) ?? 0
        var willRenew = membership.willRenew
        if product != membership.productId { add(.productChange, product: product) }
        switch state {
        case "SUBSCRIPTION_STATE_ACTIVE", "SUBSCRIPTION_STATE_CANCELED":
            if membership.pausedAt != nil {
                add(.resume, expiresAt: expiry)
            } else if let expiry, expiry > currentEnd || (replacing && !membership.transactions.contains { $0.id == order }) {
                // A replacing purchase's new order is its first period, whatever its end: a downgrade's (or a
                // crossgrade's) may end before the replaced plan's would have.
                let known = membership.transactions.contains { $0.id == order }
                if known, order != token {
                    // A later expiry without a new order: nothing was paid. Google deferred the next charge
                    // (SUBSCRIPTION_DEFERRED, purchases.subscriptionsv2.defer,
                    // https://developer.android.com/google/play/billing/subscriptions#defer-billing): the same
                    // period made longer, as RevenueCat's SUBSCRIPTION_EXTENDED; not a renewal, which counts one.
                    add(.extension, expiresAt: expiry)
                } else {
                    add(.renewal, expiresAt: expiry, transaction: known ? nil : order)
                    willRenew = true
                }
            } else if membership.billingIssueDetectedAt != nil {
                add(.billingRecovered)
            }
            let renews = state == "SUBSCRIPTION_STATE_ACTIVE" && autoRenews
            if !renews, willRenew { add(.cancellation) } else if renews, !willRenew { add(.uncancellation) }
        case "SUBSCRIPTION_STATE_IN_GRACE_PERIOD":
            if membership.billingIssueDetectedAt == nil { add(.billingIssue, grace: expiry) }
        case "SUBSCRIPTION_STATE_ON_HOLD":
            if membership.billingIssueDetectedAt == nil || membership.gracePeriodExpiresAt != nil { add(.billingIssue) }
        case "SUBSCRIPTION_STATE_PAUSED":
            if membership.pausedAt == nil { add(.pause) }
        case "SUBSCRIPTION_STATE_EXPIRED":
            // Also when its access ran out by time while it was still to renew: the expiration ends the
            // renewal too, as the App Store's does.
            if membership.status != "expired" || membership.willRenew, membership.revokedAt == nil { add(.expiration) }
        default:
            break
        }
        return events
    }

    private func productPurchased(token: String, sku: String, _ context: Context) async throws(ReceiveFailure) -> NotificationOutcome {
        guard let purchase = try await fetch({ () async throws(StoreAPIError) in try await api.product(sku, purchaseToken: token) }) else {
            return .unmatched("Google Play does not know the purchase token of this notification")
        }
        let outcome = try await applyProduct(purchase, token: token, sku: sku, user: purchase["obfuscatedExternalAccountId"]?.stringValue, context)
        try await acknowledgeIfGranted(product: purchase, sku: sku, token: token, outcome)
        return outcome
    }

    /// Grants the one-time product `sku` bought with `token` (its `products` resource: `purchase`) to `user`,
    /// once: a purchase a membership holds already is a `duplicate`.
    func applyProduct(_ purchase: JSONValue, token: String, sku: String, user: String?, _ context: Context) async throws(ReceiveFailure) -> NotificationOutcome {
        guard purchase["purchaseState"]?.intValue == 0 else { return .ignored("the one-time purchase is not purchased (pending or canceled)") }
        var writer = MembershipWriter(gateway: gateway)
        if try await writer.membership(ofOriginalTransaction: token) != nil { return .duplicate }
        guard let user else {
            return .awaitingPurchase(originalTransaction: token, reason: "the one-time purchase names no obfuscatedExternalAccountId")
        }
        let order = purchase["orderId"]?.stringValue ?? token
        _ = try await writer.grant(
            .grant(
                user: user, product: sku, source: "play_store", environment: purchase["purchaseType"]?.intValue == 0 ? "sandbox" : nil,
                transactionId: order, originalTransactionId: order == token ? nil : token, reason: context.reason
            ).imported(purchasedAt: context.sync == nil ? nil : Self.milliseconds(purchase["purchaseTimeMillis"]), renewsCount: nil)
        )
        return writer.outcome
    }

    /// A time Google writes as a string of milliseconds (`purchaseTimeMillis`), or as a number.
    static func milliseconds(_ value: JSONValue?) -> Int64? {
        value?.stringValue.flatMap { Int64($0) } ?? value?.intValue.map(Int64.init)
    }
}

extension GooglePlayReceiver {
    /// Whether a membership holds purchase `token` (as its original transaction): asked of `entitled` before
    /// a kept notification is tried again, so that waiting ones cost the Play Developer API's daily quota
    /// nothing.
    public func isGranted(purchaseToken token: String) async throws(ReceiveFailure) -> Bool {
        try await MembershipWriter(gateway: gateway).membership(ofOriginalTransaction: token) != nil
    }
}
