/// Whole listings, page after page: `memberships` and `history` answer at most 1000 items a request (100
/// unless asked), with a `next` when more follow. Each page is answered within the connection's `timeout`.
///
/// The same walk (`PageWalk`) as the asynchronous kinds' (`EntitledAsyncSender`'s `allPages(of:timeout:)`
/// and the rest), sent by blocking: these are its synchronous twins, one line each.
extension EntitledConnection {
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
    public func allPages(of request: EntitledRequest) throws(EntitledClientError) -> [EntitledResponse] {
        try walk(from: request).pages
    }

    /// Every membership the subject can see (or could see at `at`), newest first, following the pages of
    /// `memberships` to the end (see `allPages(of:)`). `minSeq` as for `EntitledRequest.check`.
    public func allMemberships(
        user: String? = nil, device: String? = nil, at: String? = nil, minSeq: UInt64? = nil
    ) throws(EntitledClientError) -> [MembershipInfo] {
        try walk(from: .memberships(user: user, device: device, at: at, minSeq: minSeq)).memberships
    }

    /// Every membership holding the store transaction `transactionId`, newest first (see `allPages(of:)`).
    public func allMemberships(transactionId: String, minSeq: UInt64? = nil) throws(EntitledClientError) -> [MembershipInfo] {
        try walk(from: .memberships(transactionId: transactionId, minSeq: minSeq)).memberships
    }

    /// Every membership of the subscription whose first transaction is `originalTransactionId`, newest
    /// first (see `allPages(of:)`).
    public func allMemberships(originalTransactionId: String, minSeq: UInt64? = nil) throws(EntitledClientError) -> [MembershipInfo] {
        try walk(from: .memberships(originalTransactionId: originalTransactionId, minSeq: minSeq)).memberships
    }

    /// The whole audit trail of a subject (`user`, `device` or both) or of an entitlement's definitions
    /// (`entitlement`), newest first, following the pages of `history` to the end (see `allPages(of:)`).
    /// A subject with more than 10,000 memberships is refused (`server` with `over_limit`).
    public func allHistory(user: String? = nil, device: String? = nil, entitlement: String? = nil) throws(EntitledClientError) -> [HistoryEntry] {
        try walk(from: .history(user: user, device: device, entitlement: entitlement)).history
    }

    /// Every erasure in the audit trail, newest first (see `allPages(of:)`).
    public func allErasureHistory() throws(EntitledClientError) -> [HistoryEntry] {
        try walk(from: .erasureHistory()).history
    }

    /// The walk from `request`'s page to the last.
    private func walk(from request: EntitledRequest) throws(EntitledClientError) -> PageWalk {
        var walk = PageWalk(request)
        while let request = walk.nextRequest { try walk.take(send(request)) }
        return walk
    }
}
