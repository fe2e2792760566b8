/// The pages of one list call, fetched one at a time as the caller asks for the next, so that an import of
/// 100,000 subscriptions holds one page in memory, not all of them:
///
/// ```swift
/// for try await page in stripe.subscriptions() {
///     for subscription in page.data { ... }
///     checkpoint(page.next)  // where to resume after a stop
/// }
/// ```
///
/// Each page is fetched with the cursor the previous one gave (Apple's `revision` or `paginationToken`,
/// Google's `nextPageToken`, Stripe's last id); the sequence ends after a page without one. A store that
/// gives the same cursor twice in a row would loop for ever: that ends the sequence with a `malformed` error.
public struct StorePages<Page: Sendable, Cursor: Sendable & Equatable>: AsyncSequence, Sendable {
    public typealias Element = Page
    public typealias Failure = StoreAPIError

    let call: StoreCall
    let first: Cursor?
    let fetch: @Sendable (Cursor?) async throws(StoreAPIError) -> (page: Page, next: Cursor?)

    /// Pages from `first` (nil: the first page) on; `fetch` returns a page and the cursor of the one after
    /// it, nil at the end.
    public init(
        _ call: StoreCall, from first: Cursor? = nil, fetch: @escaping @Sendable (Cursor?) async throws(StoreAPIError) -> (page: Page, next: Cursor?)
    ) {
        self.call = call
        self.first = first
        self.fetch = fetch
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(pages: self, cursor: first)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let pages: StorePages
        var cursor: Cursor?
        var finished = false

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(StoreAPIError) -> Page? {
            guard !finished else { return nil }
            let fetched: (page: Page, next: Cursor?)
            do {
                fetched = try await pages.fetch(cursor)
            } catch {
                finished = true
                throw error
            }
            if let next = fetched.next, next == cursor {
                finished = true
                throw StoreAPIError(pages.call, .malformed, "the store gave the page token \(next) again: paging stopped rather than loop")
            }
            cursor = fetched.next
            finished = fetched.next == nil
            return fetched.page
        }

        public mutating func next() async throws(StoreAPIError) -> Page? {
            try await next(isolation: nil)
        }
    }
}
