import EntitledClient

extension GooglePlayReceiver {
    /// Brings the membership of Google Play subscription `token` to `purchase` (its
    /// `purchases.subscriptionsv2` resource as the Play Developer API returns it now), for an import or a
    /// reconciliation: the same writes as a notification's (`applySubscription`), granted to `user` (else the
    /// purchase's `obfuscatedExternalAccountId`) with its `startTime` as the purchase time and the renewals
    /// its order id counts.
    public func bring(subscription purchase: JSONValue, token: String, user: String?, sync: StateSync) async throws(ReceiveFailure) -> StateSyncOutcome {
        var outcome = try await bringSubscription(
            purchase, token: token, user: user ?? purchase["externalAccountIdentifiers"]?["obfuscatedExternalAccountId"]?.stringValue,
            context(sync)
        )
        if outcome.changes.contains("grant") { outcome.notes.append("renewal times not given by Google Play (their number is, by the order id)") }
        return outcome
    }

    /// Brings one-time product `sku` bought with `token` (its `purchases.products` resource) to `entitled`:
    /// granted once, to `user` (else its `obfuscatedExternalAccountId`), with its purchase time.
    public func bring(product purchase: JSONValue, token: String, sku: String, user: String?, sync: StateSync) async throws(ReceiveFailure) -> StateSyncOutcome {
        let outcome = try await applyProduct(purchase, token: token, sku: sku, user: user ?? purchase["obfuscatedExternalAccountId"]?.stringValue, context(sync))
        var writer = MembershipWriter(gateway: gateway)
        guard var membership = try await writer.membership(ofOriginalTransaction: token) else {
            return StateSyncOutcome(outcome: outcome, membership: nil)
        }
        var changes = outcome.name == "applied" ? ["grant"] : []
        // `purchaseState` 1: canceled, which for a purchase that was paid is a refund or chargeback
        // (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.products).
        if purchase["purchaseState"]?.intValue == 1, membership.revokedAt == nil {
            let context = context(sync)
            membership =
                try await writer.apply(
                    .event(
                        membership: membership.id, type: .refund, eventId: context.eventID(.refund), eventTime: context.time,
                        transactionId: purchase["orderId"]?.stringValue, reason: context.reason
                    )
                ) ?? membership
            changes += writer.appliedKinds
        }
        return StateSyncOutcome(outcome: changes.isEmpty ? outcome : .applied(changes: changes.count), membership: membership, changes: changes)
    }

    /// Event ids are per membership: the moment of asking makes them new for each run (a Play purchase
    /// token is too long to be part of one).
    private func context(_ sync: StateSync) -> Context {
        Context(messageID: "\(sync.purpose.rawValue):play_store:\(sync.now)", time: sync.time, now: sync.now / 1000, sync: sync)
    }
}
