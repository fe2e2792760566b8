import EntitledClient
import Foundation

/// App Store Server Notifications V2 (`POST /apple`), verified (`AppleSignedData`: the notification, its
/// `signedTransactionInfo` and `signedRenewalInfo`) and applied
/// (https://developer.apple.com/documentation/appstoreservernotifications):
///
/// - the purchase is the membership holding the transaction's `originalTransactionId`; one not seen before
///   is granted to the transaction's `appAccountToken` (the app's user) with its product, expiry, trial
///   (`offerType` 1), auto-renew status and environment (`Sandbox` stays sandbox). A notification for an
///   unknown purchase without an `appAccountToken` is kept until a grant names its original transaction
///   (`NotificationOutcome.awaitingPurchase`). A token naming another user than the
///   membership's is a restore on another account: the server's transfer rule decides.
/// - a transaction the membership does not hold yet (`SUBSCRIBED`, `DID_RENEW`, `DID_CHANGE_RENEWAL_PREF`
///   with `UPGRADE`, `OFFER_REDEEMED`) is a new period: `renewal`, preceded by `product_change` when its
///   product is not the membership's (an upgrade or crossgrade at once; a downgrade at its renewal);
///   `DID_CHANGE_RENEWAL_STATUS`: `cancellation` / `uncancellation`; `DID_FAIL_TO_RENEW`: `billing_issue`,
///   with the renewal info's `gracePeriodExpiresDate` when the subtype is `GRACE_PERIOD`;
///   `GRACE_PERIOD_EXPIRED` and `EXPIRED`: `expiration`; `RENEWAL_EXTENDED`: `extension` to the
///   transaction's `expiresDate`; `REFUND` and `REVOKE`: `refund` (but for a refund of an earlier period than the
///   membership's current one; a period paid after a refund is a new membership:
///   AppleReceiver+Resubscription.swift); `REFUND_REVERSED`: `refund_reversal`;
///   `ONE_TIME_CHARGE`: the grant. The
///   others (`TEST`, a `DOWNGRADE` before its renewal, `REFUND_DECLINED`, `CONSUMPTION_REQUEST`,
///   `PRICE_INCREASE`, `RENEWAL_EXTENSION`, `EXTERNAL_PURCHASE_TOKEN`, `RESCIND_CONSENT`, the Advanced Commerce
///   API's `METADATA_UPDATE`, `MIGRATION` and `PRICE_CHANGE`, types this receiver does not know)
///   are answered 200 as ignored, each with its reason. STORES.md's table lists every type.
///
/// The notification's `notificationUUID` (with the kind of change) is the event id and its `signedDate`
/// the event time, so a redelivery changes nothing and an older notification is ignored.
public struct AppleReceiver: Sendable {
    public struct Settings: Sendable, Hashable {
        /// The trusted root certificates, PEM (Apple Root CA - G3 in production).
        public var rootCertificatesPEM: String
        /// The app's bundle id: notifications for another app are refused.
        public var bundleID: String
        /// The app's Apple id, checked when given (the sandbox sends none).
        public var appAppleID: Int?

        public init(rootCertificatesPEM: String, bundleID: String, appAppleID: Int? = nil) {
            self.rootCertificatesPEM = rootCertificatesPEM
            self.bundleID = bundleID
            self.appAppleID = appAppleID
        }
    }

    public let settings: Settings
    let signed: AppleSignedData
    let gateway: any EntitledGateway

    public init(settings: Settings, gateway: any EntitledGateway) throws(NotificationRefusal) {
        self.settings = settings
        self.signed = try AppleSignedData(rootCertificatesPEM: settings.rootCertificatesPEM)
        self.gateway = gateway
    }

    public func receive(body: [UInt8], now: Date = Date()) async throws(ReceiveFailure) -> NotificationOutcome {
        let notification: AppleNotification
        do {
            notification = try await read(body, now: now)
        } catch {
            throw .refused(error)
        }
        if notification.type == "TEST" { return .ignored("a TEST notification (\(notification.environment))") }
        guard let transaction = notification.transaction else {
            switch notification.type {
            case "RENEWAL_EXTENSION":
                // SUMMARY: its `summary` counts the subscriptions a mass extension reached; each one it
                // extended comes as its own RENEWAL_EXTENDED.
                return .ignored("the summary of a mass renewal-date extension: each subscription it extended comes as its own RENEWAL_EXTENDED")
            case "EXTERNAL_PURCHASE_TOKEN":
                return .ignored("an External Purchase API token, not an App Store transaction")
            default:
                return .ignored("\(notification.type) carries no transaction")
            }
        }
        return try await apply(notification, transaction)
    }

    /// The notification, verified, with its transaction and renewal info verified too.
    private func read(_ body: [UInt8], now: Date) async throws(NotificationRefusal) -> AppleNotification {
        guard let json = JSONValue(strictUTF8: body), let signedPayload = json["signedPayload"]?.stringValue else {
            throw NotificationRefusal(.malformed, "the body has no signedPayload")
        }
        let payload = try await signed.verify(signedPayload, what: "signedPayload", now: now)
        // `data` for a purchase's notifications; RENEWAL_EXTENSION/SUMMARY carries `summary`,
        // EXTERNAL_PURCHASE_TOKEN `externalPurchaseToken` and RESCIND_CONSENT `appData` instead: each names
        // the app, and none a transaction.
        let data = payload["data"] ?? payload["summary"] ?? payload["externalPurchaseToken"] ?? payload["appData"]
        guard let type = payload["notificationType"]?.stringValue, let uuid = payload["notificationUUID"]?.stringValue,
            let signedDate = try StoreTime.milliseconds(payload["signedDate"], "signedDate"), let data
        else { throw NotificationRefusal(.malformed, "signedPayload lacks notificationType, notificationUUID, signedDate or data") }
        let bundle = data["bundleId"]?.stringValue
        guard bundle == settings.bundleID else {
            throw NotificationRefusal(.wrongApp, "the notification is for bundle \(bundle ?? "(none)"), not \(settings.bundleID)")
        }
        if let expected = settings.appAppleID, let appleID = data["appAppleId"]?.intValue, appleID != expected {
            throw NotificationRefusal(.wrongApp, "the notification is for app \(appleID), not \(expected)")
        }
        var notification = AppleNotification(
            type: type, subtype: payload["subtype"]?.stringValue, uuid: uuid, signedDate: signedDate,
            environment: data["environment"]?.stringValue ?? "Production"
        )
        if let info = data["signedTransactionInfo"]?.stringValue {
            let transaction = try await signed.verify(info, what: "signedTransactionInfo", now: now)
            guard transaction["bundleId"]?.stringValue == settings.bundleID else {
                throw NotificationRefusal(.wrongApp, "signedTransactionInfo is for another bundle than \(settings.bundleID)")
            }
            notification.transaction = try AppleTransaction(transaction)
        }
        if let info = data["signedRenewalInfo"]?.stringValue {
            let renewal = try await signed.verify(info, what: "signedRenewalInfo", now: now)
            // Checked here, where a refusal is still possible, and read as a time later.
            _ = try StoreTime.milliseconds(renewal["gracePeriodExpiresDate"], "gracePeriodExpiresDate")
            notification.renewal = renewal
        }
        return notification
    }

    private func apply(_ notification: AppleNotification, _ transaction: AppleTransaction) async throws(ReceiveFailure) -> NotificationOutcome {
        var writer = MembershipWriter(gateway: gateway)
        let original = transaction.originalTransactionId
        var membership = try await RefundSuccession.newest(of: original, writer: writer)
        if notification.type == "REFUND_REVERSED", let holder = try await writer.membership(ofTransaction: transaction.transactionID) {
            // The refund it reverses revoked the membership holding the transaction, though a later period
            // may have begun another since.
            membership = holder
        }
        let renews = notification.renewal?["autoRenewStatus"]?.intValue.map { $0 == 1 }
        var granted = false  // whether this notification created the membership
        if let refunded = membership, notification.startsPeriod, Self.paysAfterRefund(transaction, refunded) {
            // A period paid after a refund: a new membership (AppleReceiver+Resubscription.swift).
            membership = try await Self.grantAfterRefund(
                transaction, after: refunded, willRenew: renews, sandbox: notification.isSandbox, reason: notification.reason, writer: &writer
            )
            granted = true
        } else if membership == nil || (transaction.appAccountToken != nil && membership?.user != transaction.appAccountToken) {
            guard let user = transaction.appAccountToken else {
                return .awaitingPurchase(
                    originalTransaction: original, reason: "no membership holds original transaction \(original), and it names no appAccountToken"
                )
            }
            // The key of the membership found (a later one's after a refund), so that a restore on another
            // account moves that one.
            let key = membership?.purchaseKey ?? original
            let moved = try await writer.grant(
                .grant(
                    user: user, product: transaction.productID, source: "app_store",
                    expiresAt: transaction.expiresAt.map { ProtocolTime.string(milliseconds: $0) }, willRenew: renews ?? (transaction.isAutoRenewable ? true : nil),
                    periodType: transaction.isTrial ? "trial" : nil, environment: notification.isSandbox ? "sandbox" : nil,
                    transactionId: transaction.transactionID, originalTransactionId: key == transaction.transactionID ? nil : key,
                    reason: notification.reason
                )
            )
            granted = membership == nil
            membership = moved ?? membership
        }
        guard let membership else {
            return .unmatched("original transaction \(original) belongs to another user, and the transfer rule keeps it there")
        }
        func event(_ type: EntitledEventName, expiresAt: Int64? = nil, grace: Int64? = nil, product: String? = nil, transactionID: String? = nil) -> EntitledRequest {
            .event(
                membership: membership.id, type: type, eventId: "\(notification.uuid):\(type.rawValue)", eventTime: notification.time,
                expiresAt: expiresAt.map { ProtocolTime.string(milliseconds: $0) }, gracePeriodExpiresAt: grace.map { ProtocolTime.string(milliseconds: $0) },
                product: product, transactionId: transactionID, reason: notification.reason
            )
        }
        func newPeriod() -> [EntitledRequest] {
            Self.periodEvents(transaction, of: membership, at: notification.time, reason: notification.reason)
        }
        var events: [EntitledRequest] = []
        // Why a notification that makes no write changes nothing; `nil` for a redelivery (`duplicate`).
        var unchanged: String?
        // Each case follows Apple's documentation of notificationType and subtype
        // (https://developer.apple.com/documentation/appstoreservernotifications/notificationtype and .../subtype);
        // STORES.md's table lists every type with what it does and its test.
        switch (notification.type, notification.subtype) {
        case ("SUBSCRIBED", _), ("DID_RENEW", _):
            // INITIAL_BUY (the grant above), RESUBSCRIBE; DID_RENEW, and BILLING_RECOVERY after a failed
            // renewal: a new period, for a downgrade's cheaper product once it takes effect.
            events = newPeriod()
        case ("DID_CHANGE_RENEWAL_PREF", "UPGRADE"):
            // "The upgrade goes into effect immediately, starting a new billing period": the transaction is
            // the new product's, with its expiry. A crossgrade to a product of the same duration comes as
            // UPGRADE too.
            events = newPeriod()
        case ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"):
            unchanged = "a downgrade (or a crossgrade to another duration) takes effect at the next renewal, whose DID_RENEW carries the new product"
        case ("DID_CHANGE_RENEWAL_PREF", _):
            unchanged = "the renewal preference went back to the current product, cancelling a pending downgrade that had changed nothing yet"
        case ("OFFER_REDEEMED", "DOWNGRADE"):
            unchanged = "an offer redeemed for a downgrade takes effect at the next renewal"
        case ("OFFER_REDEEMED", _):
            // INITIAL_BUY, RESUBSCRIBE, UPGRADE (at once), or none (an offer on the active subscription):
            // a new transaction is a new period, as for SUBSCRIBED.
            events = newPeriod()
        case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"):
            events.append(event(.cancellation))
        case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"):
            events.append(event(.uncancellation))
        case ("DID_FAIL_TO_RENEW", let subtype):
            // Billing retry; with GRACE_PERIOD, access continues until the renewal info's gracePeriodExpiresDate.
            let grace = subtype == "GRACE_PERIOD" ? notification.renewal?["gracePeriodExpiresDate"]?.intValue.map(Int64.init) : nil
            events.append(event(.billingIssue, grace: grace))
        case ("GRACE_PERIOD_EXPIRED", _), ("EXPIRED", _):
            // EXPIRED: VOLUNTARY, BILLING_RETRY, PRICE_INCREASE (consent not given), PRODUCT_NOT_FOR_SALE or none.
            events.append(event(.expiration))
        case ("RENEWAL_EXTENDED", _):
            // "The App Store extended the subscription renewal date for a specific subscription" (Extend a
            // Subscription Renewal Date, or one subscription of a mass extension): the transaction's
            // expiresDate is the new renewal date. RevenueCat: SUBSCRIPTION_EXTENDED.
            if let expiresAt = transaction.expiresAt {
                events.append(event(.extension, expiresAt: expiresAt))
            } else {
                unchanged = "RENEWAL_EXTENDED for a transaction without an expiry"
            }
        case ("RENEWAL_EXTENSION", _):
            // SUMMARY comes without a transaction (answered before this); FAILURE: "the renewal date
            // extension didn't succeed for a specific subscription".
            unchanged = "Apple could not extend this subscription's renewal date (RENEWAL_EXTENSION/\(notification.subtype ?? "none")): its expiry stays"
        case ("REFUND", _) where Self.isEarlierPeriod(transaction, of: membership):
            // The refunded transaction (signedTransactionInfo, with its revocationDate) is a period the
            // subscription has renewed past: the period paid now is not refunded. RevenueCat sends no
            // CANCELLATION for it either; `entitled` has no event that marks a transaction refunded without
            // revoking, so nothing is written.
            unchanged = "a refund of an earlier period (transaction \(transaction.transactionID)) than the membership's current one, which stays paid"
        case ("REFUND", _), ("REVOKE", _):
            // REFUND: the transaction (the current period, or a one-time purchase) was refunded. REVOKE: a
            // purchase shared through Family Sharing is no longer shared. Both take access away: a `refund`,
            // final but for a reversal; a period paid later begins a new membership.
            events.append(event(.refund, transactionID: transaction.transactionID))
        case ("REFUND_REVERSED", _):
            // "The App Store reversed a previously granted refund due to a dispute that the customer raised. If
            // your app revoked content or services as a result of the related refund, it needs to reinstate
            // them." The one event a membership revoked by a refund still takes (Protocol/PROTOCOL.md, Revocation).
            events.append(event(.refundReversal, transactionID: transaction.transactionID))
        case ("REFUND_DECLINED", _):
            unchanged = "Apple declined the customer's refund request: access stays as it is"
        case ("CONSUMPTION_REQUEST", _):
            unchanged = "Apple asks for consumption data about a refund request (answered through the App Store Server API, not by this receiver); access changes only if a REFUND follows"
        case ("PRICE_INCREASE", _):
            unchanged = "a price increase the customer was told of (PENDING) or accepted (ACCEPTED) changes no access; without consent, EXPIRED/PRICE_INCREASE ends it"
        case ("ONE_TIME_CHARGE", _):
            break  // the grant above
        case ("METADATA_UPDATE", _), ("MIGRATION", _), ("PRICE_CHANGE", _):
            // Notifications of subscriptions sold through the Advanced Commerce API (its metadata, a migration
            // to it, its price), which sells no product of this app's App Store catalog.
            unchanged = "\(notification.type) concerns a subscription of the Advanced Commerce API, which changes no access here"
        default:
            unchanged = "App Store notification type \(notification.type) is not one this receiver acts on"
        }
        // The renewal info says whether the subscription renews now; a purchase reported first through
        // `POST /purchases/apple` was taken to renew (StoreKit's transaction carries no renewal info), and a
        // notification carrying a period changes `willRenew` only by its renewal: the two agree here.
        // A membership this notification granted has the renewal info's value already.
        if notification.carriesRenewalState, !granted, let renews, membership.revokedAt == nil {
            // `willRenew` once the events above are applied: a renewal sets it.
            let renewed = events.contains { $0.fields.first { $0.key == "type" }?.value.stringValue == EntitledEventName.renewal.rawValue }
            if renews != (renewed || membership.willRenew) {
                events.append(event(renews ? .uncancellation : .cancellation))
            }
        }
        if events.isEmpty, !granted, let unchanged { return .ignored(unchanged) }
        for request in events { try await writer.apply(request) }
        return writer.outcome
    }
}

/// What a receiver reads of a verified App Store notification.
struct AppleNotification {
    var type: String
    var subtype: String?
    var uuid: String
    /// Milliseconds since the epoch.
    var signedDate: Int64
    var environment: String
    var transaction: AppleTransaction?
    var renewal: JSONValue?

    var time: String { ProtocolTime.string(milliseconds: signedDate) }
    var isSandbox: Bool { environment != "Production" }
    var reason: String { "app_store \(type)\(subtype.map { "/" + $0 } ?? "") \(uuid)" }

    /// A type whose transaction may be a new period (a purchase, a renewal, a resubscription, an upgrade
    /// at once): what begins a new membership after a refund.
    var startsPeriod: Bool {
        switch (type, subtype) {
        case ("SUBSCRIBED", _), ("DID_RENEW", _), ("DID_CHANGE_RENEWAL_PREF", "UPGRADE"): true
        case ("OFFER_REDEEMED", let subtype): subtype != "DOWNGRADE"
        default: false
        }
    }

    /// A type whose renewal info's `autoRenewStatus` is brought to the membership when it differs from
    /// `willRenew` (others change it by their own event: `DID_CHANGE_RENEWAL_STATUS`, an expiry, a refund).
    var carriesRenewalState: Bool {
        ["SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED", "DID_CHANGE_RENEWAL_PREF"].contains(type)
    }
}

/// What a receiver reads of a verified `JWSTransactionDecodedPayload`.
struct AppleTransaction {
    var transactionID: String
    var originalTransactionId: String
    var productID: String
    /// Milliseconds since the epoch; `nil` for a one-time purchase.
    var expiresAt: Int64?
    /// The app's user, as the app set it at purchase (a UUID, compared in lower case).
    var appAccountToken: String?
    /// An introductory offer (`offerType` 1): the subscription's trial.
    var isTrial: Bool
    /// An auto-renewable subscription (`type`), which renews unless the customer turned renewal off.
    var isAutoRenewable: Bool
    /// When the App Store sold it (`purchaseDate`, milliseconds): a renewal's is the renewal's.
    var purchasedAt: Int64?
    /// When the App Store refunded it or took it back from Family Sharing (`revocationDate`), if it did.
    var revokedAt: Int64?

    init(_ json: JSONValue) throws(NotificationRefusal) {
        guard let transactionID = json["transactionId"]?.stringValue, let productID = json["productId"]?.stringValue else {
            throw NotificationRefusal(.malformed, "signedTransactionInfo lacks transactionId or productId")
        }
        self.transactionID = transactionID
        self.originalTransactionId = json["originalTransactionId"]?.stringValue ?? transactionID
        self.productID = productID
        self.expiresAt = try StoreTime.milliseconds(json["expiresDate"], "expiresDate")
        self.appAccountToken = json["appAccountToken"]?.stringValue.flatMap { $0.isEmpty ? nil : $0.lowercased() }
        self.isTrial = json["offerType"]?.intValue == 1
        self.isAutoRenewable = json["type"]?.stringValue == "Auto-Renewable Subscription"
        self.purchasedAt = try StoreTime.milliseconds(json["purchaseDate"], "purchaseDate")
        self.revokedAt = try StoreTime.milliseconds(json["revocationDate"], "revocationDate")
    }
}
