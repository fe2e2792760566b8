import EntitledClient

extension AppleReceiver {
    /// Brings the membership of an App Store purchase to `state` (an import, a reconciliation), writing
    /// what a notification of each change would have: granted once, with the original purchase time, trial,
    /// ownership and environment of its first transaction; a `renewal` (after a `product_change` when the
    /// product moved) for each later transaction, dated at its purchase, but for the periods a membership
    /// that a notification of a later one began is past; then what the status says now: a `cancellation`
    /// or `uncancellation` from the renewal info's `autoRenewStatus`, a `billing_issue` in billing retry
    /// (with the grace period's end in the grace period), an `expiration` once expired, a `refund` when the
    /// newest transaction was revoked. An event `entitled` finds older than one it applied since (a renewal
    /// missed while the receiver was down, then the cancellation that did arrive) is written again dated
    /// when the App Store was asked (`sync.now`), since the App Store says it is so. A purchase naming no
    /// user is `awaitingPurchase` (the import's `no_user`).
    ///
    /// - Parameter user: the app's user; without one, the transactions' `appAccountToken`.
    public func bring(_ state: AppleSubscriptionState, user given: String?, sync: StateSync) async throws(ReceiveFailure) -> StateSyncOutcome {
        guard let first = state.transactions.first, let newest = state.transactions.last else {
            return StateSyncOutcome(outcome: .unmatched("the App Store lists no transaction of this purchase"), membership: nil)
        }
        let transactions: [AppleTransaction]
        do {
            transactions = try state.transactions.map(AppleTransaction.init)
        } catch {
            throw .refused(error)
        }
        let original = transactions[0].originalTransactionId
        var writer = MembershipWriter(gateway: gateway)
        var membership = try await RefundSuccession.newest(of: original, writer: writer)
        let user = given ?? transactions.lazy.compactMap(\.appAccountToken).last
        var notes: [String] = []
        // A period paid after the refund that revoked the membership begins a new one, as its notification
        // would have (AppleReceiver+Resubscription.swift); the periods before it are the revoked one's.
        var afterRefund = false
        if let refunded = membership, let paid = transactions.first(where: { Self.paysAfterRefund($0, refunded) }) {
            // Renewing, as the grant below: the renewal info's status is applied after the periods.
            let environment = first["environment"]?.stringValue
            membership = try await Self.grantAfterRefund(
                paid, after: refunded, willRenew: state.status != nil ? true : nil,
                sandbox: environment != nil && environment != "Production", reason: sync.reason, writer: &writer
            ) ?? membership
            afterRefund = true
        }
        if membership == nil || (given != nil && membership?.user != given) {
            guard let user else {
                // Waiting for its user, as the live receiver keeps such a notification: the import reports it
                // `no_user`, to be given in its file.
                return StateSyncOutcome(
                    outcome: .awaitingPurchase(
                        originalTransaction: original,
                        reason: "no membership holds original transaction \(original), and no transaction names an appAccountToken: give the user"
                    ),
                    membership: nil
                )
            }
            // A subscription the App Store reports a status of renewed from its purchase on: what its
            // status and renewal info say now (renewal turned off, an expiry) is applied below as the events
            // its notifications would have made, so that a renewal turned off is a cancellation
            // (`unsubscribeDetectedAt`, status `canceled`) rather than a purchase that never renewed.
            let renewing = transactions[0].expiresAt != nil && state.status != nil ? true : state.renewal?["autoRenewStatus"]?.intValue.map { $0 == 1 }
            let environment = first["environment"]?.stringValue
            let grant = EntitledRequest.grant(
                user: user, product: transactions[0].productID, source: "app_store",
                expiresAt: transactions[0].expiresAt.map { ProtocolTime.string(milliseconds: $0) },
                willRenew: renewing, periodType: transactions[0].isTrial ? "trial" : nil,
                environment: environment == nil || environment == "Production" ? nil : "sandbox",
                ownership: first["inAppOwnershipType"]?.stringValue == "FAMILY_SHARED" ? "family_shared" : nil,
                transactionId: transactions[0].transactionID,
                originalTransactionId: (membership?.purchaseKey ?? original) == transactions[0].transactionID ? nil : (membership?.purchaseKey ?? original),
                reason: sync.reason
            ).imported(purchasedAt: first["originalPurchaseDate"]?.intValue.map(Int64.init) ?? first["purchaseDate"]?.intValue.map(Int64.init), renewsCount: nil)
            let granted = try await writer.grant(grant)
            guard let granted else {
                return StateSyncOutcome(
                    outcome: .unmatched("original transaction \(original) belongs to another user, and the transfer rule keeps it there"), membership: membership
                )
            }
            membership = granted
        }
        guard var current = membership else { return StateSyncOutcome(outcome: .unmatched("no membership"), membership: nil) }
        func event(_ type: EntitledEventName, version: String, time: Int64, expiresAt: Int64? = nil, grace: Int64? = nil, product: String? = nil, transaction: String? = nil)
            -> EntitledRequest
        {
            .event(
                membership: current.id, type: type, eventId: sync.eventID(store: "app_store", subscription: original, kind: type, version: version),
                eventTime: ProtocolTime.string(milliseconds: min(time, sync.now)), expiresAt: expiresAt.map { ProtocolTime.string(milliseconds: $0) },
                gracePeriodExpiresAt: grace.map { ProtocolTime.string(milliseconds: $0) }, product: product, transactionId: transaction, reason: sync.reason
            )
        }
        // Every period after the first: its transaction, at its purchase time.
        var periodsPast = false
        for (index, transaction) in transactions.enumerated().dropFirst() where !current.transactions.contains(where: { $0.id == transaction.transactionID }) {
            // A period ending no later than the membership's access is one it is past: a notification of a
            // later period came first (the receiver heard of the newest renewal before the import). Its
            // renewal would take the expiry back to that period's end.
            if let ends = transaction.expiresAt, let access = current.expiresAt.flatMap(ProtocolTime.milliseconds), ends <= access {
                if !afterRefund { periodsPast = true }
                continue
            }
            let purchased = state.transactions[index]["purchaseDate"]?.intValue.map(Int64.init) ?? sync.now
            if transaction.productID != current.productId {
                current = try await writer.apply(event(.productChange, version: transaction.transactionID, time: purchased, product: transaction.productID), redatingTo: sync.now) ?? current
            }
            guard let expiresAt = transaction.expiresAt else { continue }
            current = try await writer.apply(event(.renewal, version: transaction.transactionID, time: purchased, expiresAt: expiresAt, transaction: transaction.transactionID), redatingTo: sync.now) ?? current
        }
        let newestID = transactions[transactions.count - 1].transactionID
        if let revoked = newest["revocationDate"]?.intValue.map(Int64.init) {
            if current.revokedAt == nil {
                current = try await writer.apply(event(.refund, version: newestID, time: revoked, transaction: newestID), redatingTo: sync.now) ?? current
            }
        } else if current.revokedAt == nil {
            for request in stateEvents(state, current, newest: transactions[transactions.count - 1], event: event) {
                current = try await writer.apply(request, redatingTo: sync.now) ?? current
            }
        }
        if given != nil, transactions.allSatisfy({ $0.appAccountToken == nil }) { notes.append("user given, not named by the App Store") }
        if periodsPast { notes.append("earlier periods not counted as renewals: the membership began with a later one, from a notification") }
        return StateSyncOutcome(outcome: writer.outcome, membership: current, changes: writer.appliedKinds, notes: notes)
    }

    /// The events that bring `membership` to the status and renewal info of `state`, beyond its periods.
    private func stateEvents(
        _ state: AppleSubscriptionState, _ membership: MembershipInfo, newest: AppleTransaction,
        event: (EntitledEventName, String, Int64, Int64?, Int64?, String?, String?) -> EntitledRequest
    ) -> [EntitledRequest] {
        guard let status = state.status else { return [] }
        var events: [EntitledRequest] = []
        // Events are written only where the membership differs from the state, so the id needs only to be
        // new each time a difference is found: the newest transaction and the moment of asking.
        let version = "\(newest.transactionID)@\(state.renewal?["signedDate"]?.intValue ?? 0)"
        let renews = state.renewal?["autoRenewStatus"]?.intValue == 1
        let signed = state.renewal?["signedDate"]?.intValue.map(Int64.init) ?? Int64.max
        switch status {
        case 1, 3, 4:
            if status == 1, membership.billingIssueDetectedAt != nil {
                events.append(event(.billingRecovered, version, signed, nil, nil, nil, nil))
            }
            if status == 3 || status == 4, membership.billingIssueDetectedAt == nil {
                let grace = status == 4 ? state.renewal?["gracePeriodExpiresDate"]?.intValue.map(Int64.init) : nil
                events.append(event(.billingIssue, version, signed, nil, grace, nil, nil))
            }
            if renews, !membership.willRenew {
                events.append(event(.uncancellation, version, signed, nil, nil, nil, nil))
            } else if !renews, membership.willRenew {
                events.append(event(.cancellation, version, signed, nil, nil, nil, nil))
            }
        case 2:
            if membership.status != "expired" || membership.willRenew {
                events.append(event(.expiration, version, newest.expiresAt ?? signed, nil, nil, nil, nil))
            }
        case 5:
            events.append(event(.refund, version, signed, nil, nil, nil, newest.transactionID))
        default:
            break
        }
        return events
    }
}
