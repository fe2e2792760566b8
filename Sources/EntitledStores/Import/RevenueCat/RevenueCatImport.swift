import EntitledClient

/// Brings a subscription of a RevenueCat export to `entitled` from the export's own rows: used where the
/// store cannot be asked (Google Play: the export names order ids, not the purchase tokens the Play
/// Developer API needs; a store whose API is not configured; RevenueCat's own billing). Where the App Store
/// can be asked, the importer asks it instead and takes only the user from the export.
///
/// The writes are those a store's notifications would have made, each dated as the export dates it: the
/// grant of the first transaction at its `start_time` (trial, sandbox, family sharing, and the renewals
/// before it when the export begins mid-subscription), a `renewal` for each later transaction (after a
/// `product_change` when the product moved), then what the newest transaction says: `refund` at
/// `refunded_at`, `cancellation` at `unsubscribe_detected_at`, `billing_issue` at
/// `billing_issues_detected_at` with the grace period's end, `expiration` once its end has passed.
public struct RevenueCatImport: Sendable {
    let gateway: any EntitledGateway

    public init(gateway: any EntitledGateway) {
        self.gateway = gateway
    }

    /// The `source` a RevenueCat store name becomes; `nil` for one `entitled` has no source for (kept as
    /// `manual`, with a note).
    static func source(of store: String) -> String? {
        switch store {
        case "app_store", "mac_app_store": "app_store"
        case "play_store": "play_store"
        case "stripe": "stripe"
        case "promotional": "promotional"
        default: nil
        }
    }

    public func bring(_ subscription: RevenueCatExport.Subscription, sync: StateSync) async throws(ReceiveFailure) -> StateSyncOutcome {
        let rows = subscription.transactions
        let first = rows[0]
        let newest = rows[rows.count - 1]
        var notes: [String] = []
        let source = Self.source(of: subscription.store) ?? "manual"
        if Self.source(of: subscription.store) == nil { notes.append("store \(subscription.store) imported as source manual") }
        if first.isAnonymous { notes.append("granted to a RevenueCat anonymous id") }
        if subscription.store == "play_store" { notes.append("Google Play taken from the export: it names no purchase token to ask Google with") }
        var writer = MembershipWriter(gateway: gateway)
        let original = subscription.originalTransactionID
        var membership = try await writer.membership(ofOriginalTransaction: original)
        if membership == nil || membership?.user != subscription.user {
            // The export begins mid-subscription when RevenueCat saw it first then: the renewals before it
            // are counted, without times.
            let earlier = max(0, (first.renewalNumber ?? 1) - 1)
            if earlier > 0 { notes.append("\(earlier) renewals before the export counted without their times") }
            let grant = EntitledRequest.grant(
                user: subscription.user, product: first.product, source: source,
                expiresAt: first.endsAt.map { ProtocolTime.string(milliseconds: $0) },
                willRenew: rows.count == 1 ? (first.isAutoRenewable && first.unsubscribeDetectedAt == nil && first.refundedAt == nil) : nil,
                periodType: first.isTrial ? "trial" : nil, environment: first.isSandbox ? "sandbox" : nil,
                ownership: first.isFamilyShared ? "family_shared" : nil, transactionId: first.transactionID,
                originalTransactionId: original == first.transactionID ? nil : original, reason: sync.reason
            ).imported(purchasedAt: first.startsAt, renewsCount: earlier)
            guard let granted = try await writer.grant(grant) else {
                return StateSyncOutcome(
                    outcome: .unmatched("original transaction \(original) belongs to another user, and the transfer rule keeps it there"), membership: membership,
                    notes: notes
                )
            }
            membership = granted
        }
        guard var current = membership else { return StateSyncOutcome(outcome: .unmatched("no membership"), membership: nil, notes: notes) }
        func event(_ type: EntitledEventName, version: String, time: Int64, expiresAt: Int64? = nil, grace: Int64? = nil, product: String? = nil, transaction: String? = nil)
            -> EntitledRequest
        {
            .event(
                membership: current.id, type: type, eventId: sync.eventID(store: subscription.store, subscription: original, kind: type, version: version),
                eventTime: ProtocolTime.string(milliseconds: min(time, sync.now)), expiresAt: expiresAt.map { ProtocolTime.string(milliseconds: $0) },
                gracePeriodExpiresAt: grace.map { ProtocolTime.string(milliseconds: $0) }, product: product, transactionId: transaction, reason: sync.reason
            )
        }
        for row in rows.dropFirst() where !current.transactions.contains(where: { $0.id == row.transactionID }) {
            if row.product != current.productId {
                current = try await writer.apply(event(.productChange, version: row.transactionID, time: row.startsAt, product: row.product)) ?? current
            }
            guard let end = row.endsAt else { continue }
            current = try await writer.apply(event(.renewal, version: row.transactionID, time: row.startsAt, expiresAt: end, transaction: row.transactionID)) ?? current
        }
        if rows.dropLast().contains(where: { $0.refundedAt != nil }) { notes.append("an earlier period was refunded; access follows the newest") }
        guard current.revokedAt == nil else {
            return StateSyncOutcome(outcome: writer.outcome, membership: current, changes: writer.appliedKinds, notes: notes)
        }
        let version = newest.transactionID
        if let refunded = newest.refundedAt {
            current = try await writer.apply(event(.refund, version: version, time: refunded, transaction: newest.transactionID)) ?? current
            return StateSyncOutcome(outcome: writer.outcome, membership: current, changes: writer.appliedKinds, notes: notes)
        }
        if let unsubscribed = newest.unsubscribeDetectedAt, current.willRenew {
            current = try await writer.apply(event(.cancellation, version: version, time: unsubscribed)) ?? current
        }
        if let billing = newest.billingIssueDetectedAt, current.billingIssueDetectedAt == nil {
            current = try await writer.apply(event(.billingIssue, version: version, time: billing, grace: newest.gracePeriodEndsAt)) ?? current
        }
        let accessEnd = max(newest.endsAt ?? .max, newest.gracePeriodEndsAt ?? .min)
        if accessEnd < sync.now, current.status != "expired" || current.willRenew {
            current = try await writer.apply(event(.expiration, version: version, time: accessEnd)) ?? current
        }
        return StateSyncOutcome(outcome: writer.outcome, membership: current, changes: writer.appliedKinds, notes: notes)
    }
}
