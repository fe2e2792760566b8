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
/// - `SUBSCRIBED` (a resubscription) and `DID_RENEW`: `renewal`; `DID_CHANGE_RENEWAL_STATUS`:
///   `cancellation` / `uncancellation`; `DID_FAIL_TO_RENEW`: `billing_issue`, with the renewal info's
///   `gracePeriodExpiresDate` when the subtype is `GRACE_PERIOD`; `GRACE_PERIOD_EXPIRED` and `EXPIRED`:
///   `expiration`; `REFUND` and `REVOKE`: `refund`; `ONE_TIME_CHARGE`: the grant; `DID_CHANGE_RENEWAL_PREF`
///   with `UPGRADE`: `product_change`. `TEST` is answered 200 and logged; other types are ignored.
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
            return .ignored("\(notification.type) carries no transaction")
        }
        return try await apply(notification, transaction)
    }

    /// The notification, verified, with its transaction and renewal info verified too.
    private func read(_ body: [UInt8], now: Date) async throws(NotificationRefusal) -> AppleNotification {
        guard let json = JSONValue(strictUTF8: body), let signedPayload = json["signedPayload"]?.stringValue else {
            throw NotificationRefusal(.malformed, "the body has no signedPayload")
        }
        let payload = try await signed.verify(signedPayload, what: "signedPayload", now: now)
        let data = payload["data"] ?? payload["summary"]
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
        var membership = try await writer.membership(ofOriginalTransaction: transaction.originalTransactionId)
        var granted = false  // whether this notification created the membership
        if membership == nil || (transaction.appAccountToken != nil && membership?.user != transaction.appAccountToken) {
            guard let user = transaction.appAccountToken else {
                return .awaitingPurchase(
                    originalTransaction: transaction.originalTransactionId,
                    reason: "no membership holds original transaction \(transaction.originalTransactionId), and it names no appAccountToken"
                )
            }
            let renews = notification.renewal?["autoRenewStatus"]?.intValue.map { $0 == 1 }
            let moved = try await writer.grant(
                .grant(
                    user: user, product: transaction.productID, source: "app_store",
                    expiresAt: transaction.expiresAt.map { ProtocolTime.string(milliseconds: $0) }, willRenew: renews,
                    periodType: transaction.isTrial ? "trial" : nil, environment: notification.isSandbox ? "sandbox" : nil,
                    transactionId: transaction.transactionID,
                    originalTransactionId: transaction.originalTransactionId == transaction.transactionID ? nil : transaction.originalTransactionId,
                    reason: notification.reason
                )
            )
            granted = membership == nil
            membership = moved ?? membership
        }
        guard let membership else {
            return .unmatched("original transaction \(transaction.originalTransactionId) belongs to another user, and the transfer rule keeps it there")
        }
        func event(_ type: String, expiresAt: Int64? = nil, grace: Int64? = nil, product: String? = nil, transactionID: String? = nil) -> EntitledRequest {
            .event(
                membership: membership.id, type: type, eventId: "\(notification.uuid):\(type)", eventTime: notification.time,
                expiresAt: expiresAt.map { ProtocolTime.string(milliseconds: $0) }, gracePeriodExpiresAt: grace.map { ProtocolTime.string(milliseconds: $0) },
                product: product, transactionId: transactionID, reason: notification.reason
            )
        }
        var events: [EntitledRequest] = []
        switch notification.type {
        case "SUBSCRIBED", "DID_RENEW":
            // A new transaction is a new period (a renewal, a resubscription). One the membership holds
            // already was applied: by the grant that just created it, or by an earlier delivery.
            let known = membership.transactions.contains { $0.id == transaction.transactionID }
            if !known, let expiresAt = transaction.expiresAt {
                events.append(event("renewal", expiresAt: expiresAt, transactionID: transaction.transactionID))
            }
        case "DID_CHANGE_RENEWAL_STATUS":
            if notification.subtype == "AUTO_RENEW_DISABLED" { events.append(event("cancellation")) }
            if notification.subtype == "AUTO_RENEW_ENABLED" { events.append(event("uncancellation")) }
        case "DID_FAIL_TO_RENEW":
            let grace = notification.subtype == "GRACE_PERIOD" ? notification.renewal?["gracePeriodExpiresDate"]?.intValue.map(Int64.init) : nil
            events.append(event("billing_issue", grace: grace))
        case "GRACE_PERIOD_EXPIRED", "EXPIRED":
            events.append(event("expiration"))
        case "REFUND", "REVOKE":
            events.append(event("refund", transactionID: transaction.transactionID))
        case "DID_CHANGE_RENEWAL_PREF" where notification.subtype == "UPGRADE":
            if transaction.productID != membership.productId { events.append(event("product_change", product: transaction.productID)) }
        case "ONE_TIME_CHARGE":
            break  // the grant above
        default:
            if !granted { return .ignored("App Store notification type \(notification.type) is not one this receiver acts on") }
        }
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
    }
}
