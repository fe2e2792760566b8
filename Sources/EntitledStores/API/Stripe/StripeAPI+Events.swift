import EntitledClient
import Foundation

extension StripeAPI {
    /// How far back List events reaches: it lists "events going back up to 30 days"
    /// (https://docs.stripe.com/api/events/list); older ones are no longer listed.
    public static let eventsWindow: Duration = .seconds(30 * 86_400)

    /// One page of List events (`GET /v1/events`, https://docs.stripe.com/api/events/list): `limit` (1 to
    /// 100) events created at or after `createdSince` (`created[gte]`), of `types` (`types[]`, at most 20;
    /// empty: all), after `startingAfter`, newest first as Stripe lists them.
    public func eventsPage(
        createdSince: Date? = nil, types: [String] = [], limit: Int = 100, startingAfter: String? = nil
    ) async throws(StoreAPIError) -> StripeListPage {
        let call = StoreCall(store: Self.store, name: "List events", identifier: startingAfter.map { "after \($0)" })
        var pairs = [("limit", String(limit))]
        if let createdSince { pairs.append(("created%5Bgte%5D", String(Int64(createdSince.timeIntervalSince1970.rounded(.down))))) }
        for type in types { pairs.append(("types%5B%5D", type)) }
        if let startingAfter { pairs.append(("starting_after", startingAfter)) }
        return try await page(call, "/v1/events" + Self.query(pairs))
    }

    /// Every page of the events created at or after `createdSince`, of `types`, one at a time, from
    /// `startingAfter` (nil: the newest) on.
    public func events(
        createdSince: Date? = nil, types: [String] = [], limit: Int = 100, startingAfter: String? = nil
    ) -> StorePages<StripeListPage, String> {
        StorePages(StoreCall(store: Self.store, name: "List events"), from: startingAfter) { (cursor) async throws(StoreAPIError) in
            let page = try await eventsPage(createdSince: createdSince, types: types, limit: limit, startingAfter: cursor)
            return (page, page.next)
        }
    }
}
