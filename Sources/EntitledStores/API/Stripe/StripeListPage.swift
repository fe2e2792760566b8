import EntitledClient

/// One page of a Stripe list call (https://docs.stripe.com/api/pagination): its objects, and the cursor of
/// the next page (`starting_after`: the last object's id) while `has_more` is true.
public struct StripeListPage: Sendable, Hashable {
    /// The objects, as Stripe wrote them.
    public var data: [JSONValue]
    public var hasMore: Bool
    /// The next page's `starting_after`, nil after the last page.
    public var next: String?
}
