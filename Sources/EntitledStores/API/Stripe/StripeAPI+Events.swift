import EntitledClient
import Foundation

extension StripeAPI {
    /// How far back List events reaches: it lists "events going back up to 30 days"
    /// (https://docs.stripe.com/api/events/list); older ones are no longer listed.
    public static let eventsWindow: Duration = .seconds(30 * 86_400)

    /// One page of List events (`GET /v1/events`, https://docs.stripe.com/api/events/list): `limit` (1 to
    /// 100) events created at or after `createdSince` (`created[gte]`), of `types` (`types[]`, at most 20;
    /// empty: all), after `startingAfter` or before `endingBefore` (the newer ones just before it), newest
    /// first as Stripe lists them.
    public func eventsPage(
        createdSince: Date? = nil, types: [String] = [], limit: Int = 100, startingAfter: String? = nil, endingBefore: String? = nil
    ) async throws(StoreAPIError) -> StripeListPage {
        let call = StoreCall(
            store: Self.store, name: "List events", identifier: startingAfter.map { "after \($0)" } ?? endingBefore.map { "before \($0)" }
        )
        var pairs = [("limit", String(limit))]
        if let createdSince { pairs.append(("created%5Bgte%5D", String(Int64(createdSince.timeIntervalSince1970.rounded(.down))))) }
        for type in types { pairs.append(("types%5B%5D", type)) }
        if let startingAfter { pairs.append(("starting_after", startingAfter)) }
        if let endingBefore { pairs.append(("ending_before", endingBefore)) }
        return try await page(call, "/v1/events" + Self.query(pairs))
    }

    /// The events created at or after `createdSince`, of `types`, oldest first, a page at a time: the order
    /// they happened in, which is the order they apply in (a refund before the later update of its
    /// subscription; `entitled` ignores an event older than the newest applied). Stripe lists newest
    /// first, so the oldest page is found first, by a pass over the pages that keeps only the one in hand;
    /// then the newer ones are read backwards with `ending_before` ("returns objects listed before the
    /// named object", still newest first, `has_more` telling whether newer ones remain:
    /// https://docs.stripe.com/api/pagination), each page reversed. Events created meanwhile come last.
    /// A page's `next` is the `ending_before` of the page after it.
    public func eventsOldestFirst(createdSince: Date, types: [String] = [], limit: Int = 100) -> StorePages<StripeListPage, String> {
        let call = StoreCall(store: Self.store, name: "List events")
        return StorePages(call, from: nil) { (cursor) async throws(StoreAPIError) in
            var page: StripeListPage
            if let cursor {
                page = try await eventsPage(createdSince: createdSince, types: types, limit: limit, endingBefore: cursor)
            } else {
                page = try await eventsPage(createdSince: createdSince, types: types, limit: limit)
                var newer = false
                while let after = page.next {
                    page = try await eventsPage(createdSince: createdSince, types: types, limit: limit, startingAfter: after)
                    newer = true
                }
                // The oldest page: the ones after it (newer) remain when it was not the only one.
                page.hasMore = newer
            }
            let newest = page.data.first?["id"]?.stringValue
            if page.hasMore, newest == nil { throw StoreAPIError(call, .malformed, "has_more is true but the page's first event has no id") }
            let next = page.hasMore ? newest : nil
            return (StripeListPage(data: page.data.reversed(), hasMore: page.hasMore, next: next), next)
        }
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
