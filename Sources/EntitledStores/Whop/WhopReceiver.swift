import EntitledClient
import Foundation

/// Whop's webhooks (`POST /whop`), verified (`StandardWebhookSignature`) and applied. A Whop membership is
/// an `entitled` membership whose original transaction is the Whop membership id (`mem_...`), owned by
/// the app's user (`metadata[<user key>]`, else the Whop user id), with the product's id and access until
/// its `renewal_period_end` (none: lifetime):
///
/// - `membership.went_valid` (API v1: `membership.activated`): granted if new; a later period end a
///   `renewal`; one that had ended a `resume`.
/// - `membership.went_invalid` (`membership.deactivated`): an `expiration`.
/// - `payment.succeeded`: a renewal payment (`WhopReceiver+Payments.swift`): Whop announces the renewal of a
///   membership that stays valid only so.
/// - `payment.failed`: a `billing_issue` of the payment's membership (recovered when it goes valid again, or
///   its payment succeeds).
/// - `payment.refunded` (`refund.created`): a `refund` of the payment's membership once the payment is refunded
///   in full (`WhopReceiver+Refunds.swift`); one refunded in part keeps its access.
///
/// The `webhook-id` (with the kind of change) is the event id, the event's time (`timestamp`, else the
/// webhook's) the event time.
public struct WhopReceiver: Sendable {
    public struct Settings: Sendable, Hashable {
        /// The webhook secrets: several while one replaces another.
        public var secrets: [String]
        /// The membership metadata key that holds the app's user id.
        public var userMetadataKey: String

        public init(secrets: [String], userMetadataKey: String = "app_user_id") {
            self.secrets = secrets
            self.userMetadataKey = userMetadataKey
        }
    }

    public let settings: Settings
    let gateway: any EntitledGateway

    public init(settings: Settings, gateway: any EntitledGateway) {
        self.settings = settings
        self.gateway = gateway
    }

    /// Verifies and applies one webhook request; `headers` by lower-case name; `now` in Unix seconds.
    public func receive(body: [UInt8], headers: [String: String], now: Int64) async throws(ReceiveFailure) -> NotificationOutcome {
        let messageID: String
        let sentAt: Int64
        do {
            messageID = try StandardWebhookSignature.verify(
                id: headers["webhook-id"], timestamp: headers["webhook-timestamp"], signature: headers["webhook-signature"], body: body,
                secrets: settings.secrets, now: now
            )
            sentAt = Int64(headers["webhook-timestamp"] ?? "") ?? now
        } catch {
            throw .refused(error)
        }
        guard let event = JSONValue(strictUTF8: body), let data = event["data"],
            let type = event["type"]?.stringValue ?? event["action"]?.stringValue
        else { throw .refused(NotificationRefusal(.malformed, "not a Whop webhook: type (or action) or data is missing")) }
        let time: String
        do {
            time = ProtocolTime.string(milliseconds: (try Self.seconds(event["timestamp"], "timestamp") ?? sentAt) * 1000)
        } catch {
            throw .refused(error)
        }
        let context = Context(id: messageID, type: type, time: time)
        switch type {
        case "membership.went_valid", "membership.activated":
            return try await wentValid(try membership(data), context)
        case "membership.went_invalid", "membership.deactivated":
            return try await wentInvalid(try membership(data), context)
        case "payment.refunded", "refund.created":
            return try await refunded(data, context)
        case "payment.failed":
            return try await paymentFailed(data, context)
        case "payment.succeeded":
            return try await paymentSucceeded(data, context)
        default:
            return .ignored("Whop event type \(type) is not one this receiver acts on")
        }
    }

    struct Context {
        var id: String
        var type: String
        var time: String

        func eventID(_ kind: EntitledEventName) -> String { "\(id):\(kind.rawValue)" }
        var reason: String { "whop \(type) \(id)" }
    }

    /// What a receiver reads of a Whop membership object.
    struct WhopMembership {
        var id: String
        var user: String
        var product: String
        /// Milliseconds; `nil` for lifetime access.
        var periodEnd: Int64?
        var cancelsAtPeriodEnd: Bool
    }

    private func membership(_ data: JSONValue) throws(ReceiveFailure) -> WhopMembership {
        guard let id = data["id"]?.storeID ?? data["membership"]?.storeID, id.hasPrefix("mem_") else {
            throw .refused(NotificationRefusal(.malformed, "data is not a Whop membership (no mem_ id)"))
        }
        guard let whopUser = data["user"]?.storeID ?? data["user_id"]?.stringValue else {
            throw .refused(NotificationRefusal(.malformed, "Whop membership \(id) names no user"))
        }
        guard let product = data["product"]?.storeID ?? data["product_id"]?.stringValue else {
            throw .refused(NotificationRefusal(.malformed, "Whop membership \(id) names no product"))
        }
        let user = data["metadata"]?[settings.userMetadataKey]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? whopUser
        let periodEnd: Int64?
        do {
            periodEnd = try Self.seconds(data["renewal_period_end"] ?? data["expires_at"], "renewal_period_end").map { $0 * 1000 }
        } catch {
            throw .refused(error)
        }
        return WhopMembership(
            id: id, user: user, product: product, periodEnd: periodEnd,
            cancelsAtPeriodEnd: data["cancel_at_period_end"]?.boolValue ?? false
        )
    }

    private func wentValid(_ whop: WhopMembership, _ context: Context) async throws(ReceiveFailure) -> NotificationOutcome {
        var writer = MembershipWriter(gateway: gateway)
        var found = try await writer.membership(ofOriginalTransaction: whop.id)
        if found == nil || found?.user != whop.user {
            let granted = try await writer.grant(
                .grant(
                    user: whop.user, product: whop.product, source: "whop", expiresAt: whop.periodEnd.map { ProtocolTime.string(milliseconds: $0) },
                    willRenew: whop.periodEnd == nil ? nil : !whop.cancelsAtPeriodEnd, transactionId: whop.id, reason: context.reason
                )
            )
            found = granted ?? found
        }
        guard let membership = found else { return .unmatched("Whop membership \(whop.id) belongs to another user, and the transfer rule keeps it there") }
        let currentEnd = membership.expiresAt.flatMap(ProtocolTime.milliseconds)
        if let periodEnd = whop.periodEnd {
            // A membership that went invalid had its access end then: valid again with a period end past
            // that is a renewal too.
            if membership.pausedAt != nil {
                try await writer.apply(event(membership, .resume, expiresAt: periodEnd, context))
            } else if periodEnd > (currentEnd ?? .max) {
                try await writer.apply(event(membership, .renewal, expiresAt: periodEnd, context))
            } else if membership.billingIssueDetectedAt != nil {
                try await writer.apply(event(membership, .billingRecovered, context))
            }
        }
        return writer.outcome
    }

    private func wentInvalid(_ whop: WhopMembership, _ context: Context) async throws(ReceiveFailure) -> NotificationOutcome {
        var writer = MembershipWriter(gateway: gateway)
        guard let membership = try await writer.membership(ofOriginalTransaction: whop.id) else {
            return .unmatched("no membership holds Whop membership \(whop.id)")
        }
        if membership.isActive { try await writer.apply(event(membership, .expiration, context)) }
        return writer.outcome
    }

    /// A renewal payment failed: a billing issue; access lasts until the period's end, and a membership
    /// that goes valid again (a retry succeeded) recovers.
    private func paymentFailed(_ data: JSONValue, _ context: Context) async throws(ReceiveFailure) -> NotificationOutcome {
        try await applyToPaymentsMembership(data, .billingIssue, context)
    }

    func applyToPaymentsMembership(_ data: JSONValue, _ type: EntitledEventName, _ context: Context) async throws(ReceiveFailure) -> NotificationOutcome {
        let payment = data["payment"] ?? data
        guard let membershipID = payment["membership"]?.storeID ?? payment["membership_id"]?.stringValue else {
            return .unmatched("the payment names no Whop membership")
        }
        var writer = MembershipWriter(gateway: gateway)
        guard let membership = try await writer.membership(ofOriginalTransaction: membershipID) else {
            return .unmatched("no membership holds Whop membership \(membershipID)")
        }
        try await writer.apply(event(membership, type, context))
        return writer.outcome
    }

    func event(_ membership: MembershipInfo, _ type: EntitledEventName, expiresAt: Int64? = nil, transaction: String? = nil, _ context: Context) -> EntitledRequest {
        .event(
            membership: membership.id, type: type, eventId: context.eventID(type), eventTime: context.time,
            expiresAt: expiresAt.map { ProtocolTime.string(milliseconds: $0) }, transactionId: transaction, reason: context.reason
        )
    }

    /// Unix seconds, given as a number or as an ISO 8601 time (Whop's API v1 writes times as text), checked
    /// to lie between 1970 and 9999 (`field` names it in the refusal); `nil` when absent or unreadable.
    static func seconds(_ value: JSONValue?, _ field: String) throws(NotificationRefusal) -> Int64? {
        guard let value, !value.isNull else { return nil }
        if value.intValue != nil { return try StoreTime.seconds(value, field) }
        guard let text = value.stringValue else { return nil }
        if let number = Int64(text) { return try StoreTime.seconds(number, field) }
        // Four digits of year and offsets under a day: the milliseconds cannot overflow.
        guard let milliseconds = ProtocolTime.rfc3339Milliseconds(text) else { return nil }
        guard milliseconds >= 0, milliseconds <= StoreTime.latestMilliseconds else {
            throw NotificationRefusal(.malformed, "\(field) \(text) is not a time between 1970 and 9999")
        }
        return milliseconds / 1000
    }
}
