/// What the two asynchronous ways of talking to a server have in common: `EntitledAsyncConnection` (one
/// connection) and `EntitledPool` (several, to one server or the nodes of a cluster) both send a request
/// and wait for its answer.
///
/// It exists so that what is built on sending alone is written once for both, and behaves the same on
/// both: the whole listings (`allPages(of:timeout:)`, `allMemberships`, `allHistory`,
/// `allErasureHistory`). The blocking `EntitledConnection` is not one: a synchronous method cannot come
/// from the same extension as these asynchronous ones, so it has its own few one-line listings, which
/// follow the same `PageWalk`.
public protocol EntitledAsyncSender: Sendable {
    /// Sends one request and waits for its answer; an error answer (`"ok":false`) is returned, not thrown.
    /// `timeout` bounds the wait; `nil` means the sender's own request timeout: the pool's
    /// `Configuration.requestTimeout`, the connection's 10 seconds (what its `send` waits by default).
    func send(_ request: EntitledRequest, timeout: Duration?) async throws(EntitledClientError) -> EntitledResponse
}
