import EntitledClient

extension StripeAPI {
    /// One page of List subscriptions (`GET /v1/subscriptions`, https://docs.stripe.com/api/subscriptions/list):
    /// `limit` (1 to 100) subscriptions of `status` after `startingAfter`, newest first. Stripe's default
    /// leaves canceled subscriptions out ("By default, returns a list of subscriptions that have not been
    /// canceled"); `all` (the default here) includes them. With `expandCustomer`, each `customer` is the
    /// customer object (`expand[]=data.customer`) rather than its id. With `customer`, only that customer's.
    public func subscriptionsPage(
        status: String = "all", customer: String? = nil, expandCustomer: Bool = false, limit: Int = 100, startingAfter: String? = nil
    ) async throws(StoreAPIError) -> StripeListPage {
        let call = StoreCall(store: Self.store, name: "List subscriptions", identifier: customer ?? startingAfter.map { "after \($0)" })
        var pairs = [("status", status), ("limit", String(limit))]
        if let customer { pairs.append(("customer", customer)) }
        if let startingAfter { pairs.append(("starting_after", startingAfter)) }
        var path = "/v1/subscriptions" + Self.query(pairs)
        if expandCustomer { path += "&expand%5B%5D=data.customer" }
        return try await page(call, path)
    }

    /// Every page of the subscriptions of `status`, one at a time, from `startingAfter` (nil: the first
    /// page) on.
    public func subscriptions(
        status: String = "all", customer: String? = nil, expandCustomer: Bool = false, limit: Int = 100, startingAfter: String? = nil
    ) -> StorePages<StripeListPage, String> {
        StorePages(StoreCall(store: Self.store, name: "List subscriptions", identifier: customer), from: startingAfter) { (cursor) async throws(StoreAPIError) in
            let page = try await subscriptionsPage(status: status, customer: customer, expandCustomer: expandCustomer, limit: limit, startingAfter: cursor)
            return (page, page.next)
        }
    }

    /// Retrieve a subscription (`GET /v1/subscriptions/{id}`, https://docs.stripe.com/api/subscriptions/retrieve).
    /// - Throws: `notFound` (storeCode `resource_missing`) for a subscription Stripe does not know.
    public func subscription(_ id: String, expandCustomer: Bool = false) async throws(StoreAPIError) -> JSONValue {
        let call = StoreCall(store: Self.store, name: "Retrieve a subscription", identifier: id)
        return try await get(call, "/v1/subscriptions/\(StoreHTTP.escaped(id))" + (expandCustomer ? "?expand%5B%5D=customer" : ""))
    }
}
