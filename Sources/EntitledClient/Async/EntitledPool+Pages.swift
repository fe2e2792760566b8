/// Whole listings, page after page (as `EntitledConnection`'s `allPages(of:)` and the rest).
extension EntitledPool {
    /// Sends a paged read (`memberships` or `history`) and then the request for each following page (its
    /// `after` set to the answer's `next`), until an answer has no `next`; returns every answer, in order.
    /// Without a `limit`, pages of `EntitledRequest.maximumPageLimit` (1000) are asked for. `timeout`
    /// bounds each page's answer (default: the configuration's `requestTimeout`).
    ///
    /// Each page is a read sent through `send`: on any connection, and again on another node when its
    /// connection is lost. The nodes of a cluster agree on the cursors, so the pages may come from
    /// different nodes; give `minSeq` (a write's `EntitledResponse.sequence`, kept on every page) for
    /// every page to see that write. An error answer is never sent again.
    ///
    /// - Throws: `server(failure)` when the server refuses a page (`over_limit`, which asking again
    ///   would not change, a `bad_request`...), `malformedResponse` for an answer without its list or
    ///   repeating a `next`, and the errors of `send`.
    public func allPages(of request: EntitledRequest, timeout: Duration? = nil) async throws(EntitledClientError) -> [EntitledResponse] {
        var walk = PageWalk(request)
        var pages: [EntitledResponse] = []
        while true {
            let page = try await send(walk.request, timeout: timeout)
            pages.append(page)
            guard try walk.advance(past: page) else { return pages }
        }
    }

    /// Every membership the subject can see (or could see at `at`), newest first, following the pages of
    /// `memberships` to the end (see `allPages(of:timeout:)`).
    public func allMemberships(
        user: String? = nil, device: String? = nil, at: String? = nil, minSeq: UInt64? = nil, timeout: Duration? = nil
    ) async throws(EntitledClientError) -> [MembershipInfo] {
        try await allPages(of: .memberships(user: user, device: device, at: at, minSeq: minSeq), timeout: timeout)
            .flatMap { $0.memberships ?? [] }
    }

    /// Every membership holding the store transaction `transactionId`, newest first.
    public func allMemberships(transactionId: String, minSeq: UInt64? = nil, timeout: Duration? = nil) async throws(EntitledClientError)
        -> [MembershipInfo]
    {
        try await allPages(of: .memberships(transactionId: transactionId, minSeq: minSeq), timeout: timeout).flatMap { $0.memberships ?? [] }
    }

    /// Every membership of the subscription whose first transaction is `originalTransactionId`, newest first.
    public func allMemberships(
        originalTransactionId: String, minSeq: UInt64? = nil, timeout: Duration? = nil
    ) async throws(EntitledClientError) -> [MembershipInfo] {
        try await allPages(of: .memberships(originalTransactionId: originalTransactionId, minSeq: minSeq), timeout: timeout)
            .flatMap { $0.memberships ?? [] }
    }

    /// The whole audit trail of a subject or of an entitlement's definitions, newest first. A subject with
    /// more than 10,000 memberships is refused (`server` with `over_limit`).
    public func allHistory(
        user: String? = nil, device: String? = nil, entitlement: String? = nil, timeout: Duration? = nil
    ) async throws(EntitledClientError) -> [HistoryEntry] {
        try await allPages(of: .history(user: user, device: device, entitlement: entitlement), timeout: timeout).flatMap { $0.history ?? [] }
    }

    /// Every erasure in the audit trail, newest first.
    public func allErasureHistory(timeout: Duration? = nil) async throws(EntitledClientError) -> [HistoryEntry] {
        try await allPages(of: .erasureHistory(), timeout: timeout).flatMap { $0.history ?? [] }
    }
}
