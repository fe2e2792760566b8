/// The connection's whole listings (`allPages(of:timeout:)`, `allMemberships`, ...) are
/// `EntitledAsyncSender`'s, shared with `EntitledPool`; each page is answered within `timeout`, by default
/// the 10 seconds `send` waits.
extension EntitledAsyncConnection: EntitledAsyncSender {
    /// `send(_:timeout:)` for a caller that may have no timeout of its own, as `EntitledPool.send` takes
    /// one: `nil` waits `send`'s default 10 seconds.
    public func send(_ request: EntitledRequest, timeout: Duration?) async throws(EntitledClientError) -> EntitledResponse {
        let timeout: Duration = timeout ?? Self.defaultRequestTimeout
        return try await send(request, timeout: timeout)
    }
}
