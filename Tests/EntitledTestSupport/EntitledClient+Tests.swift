import EntitledClient

// Small conveniences over the client library for the tests that exchange requests and answers.

extension EntitledAsyncConnection {
    /// A connection over TCP to a server on 127.0.0.1, where the in-process servers and the `entitled`
    /// processes of these tests listen.
    public static func local(port: Int) async throws -> EntitledAsyncConnection {
        try await connect(to: .tcp(host: "127.0.0.1", port: port))
    }

    /// The next line the server pushed, or `nil` when none came within `timeout` or the connection closed.
    ///
    /// Waiting ends by cancelling the read, and a cancelled read ends an `AsyncStream` for good, so after a
    /// `nil` no further push can be read: this waits for a push that must come, it cannot show none did.
    public func nextPush(within timeout: Duration = .seconds(10)) async -> EntitledPush? {
        await withTaskGroup(of: EntitledPush?.self) { group in
            group.addTask {
                var iterator = self.pushes.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Closes the connection and returns the pushes that had arrived and were not read: all of them, as
    /// `pushes` hands out what it holds before it ends.
    public func closeAndCollectUnreadPushes() async -> [EntitledPush] {
        await close()
        var unread: [EntitledPush] = []
        for await push in pushes { unread.append(push) }
        return unread
    }
}

extension EntitledResponse {
    /// The `active` of a `check` answer.
    public var active: Bool? { self["active"]?.boolValue }

    /// The code of an error answer (`bad_request`, `not_found`, ...); `nil` for a success.
    public var errorCode: String? { error?.code.rawValue }
}
