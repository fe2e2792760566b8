/// The lifecycle events a store reports about a subscription, as the `type` of an `event` request
/// (`EntitledRequest.event(membership:type:...)`): the raw values are the protocol's names.
///
/// The server spells the same names in its own enum (EntitledCore's `LifecycleEvent.Kind.Name`), which
/// this library does not import; EventNameAgreementTests holds the two to one set.
public enum EntitledEventName: String, CaseIterable, Sendable {
    /// A new period was paid for; needs `expiresAt`. Ends a trial and a billing issue.
    case renewal
    /// Renewal turned off: access continues until the membership expires.
    case cancellation
    /// Renewal turned back on.
    case uncancellation
    /// The store could not charge; with `gracePeriodExpiresAt`, access continues until the grace period ends.
    case billingIssue = "billing_issue"
    /// The store charged after a billing issue.
    case billingRecovered = "billing_recovered"
    /// Access ends at the event's time, whatever the membership's expiry said.
    case expiration
    /// Access stops from the event's time until a `resume`.
    case pause
    /// Access continues after a pause; with `expiresAt`, until then.
    case resume
    /// The subscription moved to another product; needs `product`.
    case productChange = "product_change"
    /// The purchase was refunded: access ends, finally, unless the store reverses the refund.
    case refund
    /// Access extended to `expiresAt` without a payment (a store's free days, RevenueCat's extension).
    case `extension`
    /// The store reversed a refund: what the refund took away is given back.
    case refundReversal = "refund_reversal"
}
