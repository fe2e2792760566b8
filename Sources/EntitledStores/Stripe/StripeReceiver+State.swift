import EntitledClient

extension StripeReceiver {
    /// Brings the membership of a Stripe subscription (its object, as List subscriptions or Retrieve a
    /// subscription return it) to the subscription's state, for an import or a reconciliation: granted
    /// with its `start_date` as the purchase time when no membership holds it, then the same events a
    /// `customer.subscription.updated` would write (`events(for:membership:_:)`), dated when Stripe was asked.
    ///
    /// Stripe's subscription tells neither its past renewals nor their times (its invoices would): the
    /// import says so in its report.
    public func bring(subscriptionObject object: JSONValue, sync: StateSync) async throws(ReceiveFailure) -> StateSyncOutcome {
        let subscription: StripeSubscription
        do {
            subscription = try StripeSubscription(object, userMetadataKey: settings.userMetadataKey)
        } catch {
            throw .refused(error)
        }
        // Writes are only made where the membership differs from the state; the id is new for each moment
        // of asking, and the same on a retry of the same run after a crash (the state then agrees).
        let context = EventContext(
            id: "\(sync.purpose.rawValue):stripe:\(subscription.id):\(sync.now)", type: "state", time: sync.time, created: sync.now / 1000, sync: sync
        )
        var outcome = try await bring(subscription, context)
        if outcome.changes.contains("grant") { outcome.notes.append("renewals before the import not counted: Stripe's subscription does not list them") }
        return outcome
    }
}
