/// Whole listings, page after page: `memberships` and `history` answer at most 1000 items a request (100
/// unless asked), with a `next` when more follow. The same on `EntitledAsyncConnection` and `EntitledPool`
/// (what the pool adds, sending a page again on another node, is `EntitledPool.send`'s), and as
/// `EntitledConnection`'s blocking `allPages(of:)` and the rest.
///
/// `timeout` bounds each page's answer, not the whole listing; `nil` (the default) means the sender's own
/// request timeout: the pool's `Configuration.requestTimeout`, the connection's 10 seconds.
extension EntitledAsyncSender {
    /// Sends a paged read (`memberships` or `history`) and then the request for each following page (its
    /// `after` set to the answer's `next`), until an answer has no `next`; returns every answer, in order.
    /// Without a `limit`, pages of `EntitledRequest.maximumPageLimit` (1000) are asked for.
    ///
    /// The listing stays consistent while the server changes: nothing is listed twice, and what existed
    /// when it started and still exists is listed once (newer items come before the first page).
    ///
    /// - Throws: `server(failure)` when the server refuses a page (`over_limit`, which asking again
    ///   would not change, a `bad_request`...), `malformedResponse` for an answer without its list or
    ///   repeating a `next`, and the errors of `send`. The pages answered before are dropped then.
    public func allPages(of request: EntitledRequest, timeout: Duration? = nil) async throws(EntitledClientError) -> [EntitledResponse] {
        try await walk(from: request, timeout: timeout).pages
    }

    /// Every membership the subject can see (or could see at `at`), newest first, following the pages of
    /// `memberships` to the end (see `allPages(of:timeout:)`). `minSeq` as for `EntitledRequest.check`.
    public func allMemberships(
        user: String? = nil, device: String? = nil, at: String? = nil, minSeq: UInt64? = nil, timeout: Duration? = nil
    ) async throws(EntitledClientError) -> [MembershipInfo] {
        try await walk(from: .memberships(user: user, device: device, at: at, minSeq: minSeq), timeout: timeout).memberships
    }

    /// Every membership holding the store transaction `transactionId`, newest first (see
    /// `allPages(of:timeout:)`).
    public func allMemberships(
        transactionId: String, minSeq: UInt64? = nil, timeout: Duration? = nil
    ) async throws(EntitledClientError) -> [MembershipInfo] {
        try await walk(from: .memberships(transactionId: transactionId, minSeq: minSeq), timeout: timeout).memberships
    }

    /// Every membership of the subscription whose first transaction is `originalTransactionId`, newest
    /// first (see `allPages(of:timeout:)`).
    public func allMemberships(
        originalTransactionId: String, minSeq: UInt64? = nil, timeout: Duration? = nil
    ) async throws(EntitledClientError) -> [MembershipInfo] {
        try await walk(from: .memberships(originalTransactionId: originalTransactionId, minSeq: minSeq), timeout: timeout).memberships
    }

    /// The whole audit trail of a subject (`user`, `device` or both) or of an entitlement's definitions
    /// (`entitlement`), newest first, following the pages of `history` to the end (see
    /// `allPages(of:timeout:)`). A subject with more than 10,000 memberships is refused (`server` with
    /// `over_limit`).
    public func allHistory(
        user: String? = nil, device: String? = nil, entitlement: String? = nil, timeout: Duration? = nil
    ) async throws(EntitledClientError) -> [HistoryEntry] {
        try await walk(from: .history(user: user, device: device, entitlement: entitlement), timeout: timeout).history
    }

    /// Every erasure in the audit trail, newest first (see `allPages(of:timeout:)`).
    public func allErasureHistory(timeout: Duration? = nil) async throws(EntitledClientError) -> [HistoryEntry] {
        try await walk(from: .erasureHistory(), timeout: timeout).history
    }

    /// The walk from `request`'s page to the last, each page sent within `timeout`.
    private func walk(from request: EntitledRequest, timeout: Duration?) async throws(EntitledClientError) -> PageWalk {
        var walk = PageWalk(request)
        while let request = walk.nextRequest { try walk.take(await send(request, timeout: timeout)) }
        return walk
    }
}
