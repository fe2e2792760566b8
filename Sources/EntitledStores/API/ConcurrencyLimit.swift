/// At most `width` calls of one store's API in flight at once, the others waiting their turn in order: the
/// stores' rate limits are per account (Stripe: 100 read requests a second in live mode; the Play Developer
/// API: a daily quota and a per-minute one), so an import of 100,000 subscriptions must not open 100,000
/// requests.
public actor ConcurrencyLimit {
    public nonisolated let width: Int
    private var inFlight = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var firstWaiting = 0

    public init(width: Int) {
        self.width = max(1, width)
    }

    /// Runs `body` once fewer than `width` others run.
    public func run<Result: Sendable, Failure: Error>(_ body: @Sendable () async throws(Failure) -> Result) async throws(Failure) -> Result {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        if inFlight < width {
            inFlight += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if firstWaiting < waiting.count {
            // The slot passes to the next waiter: `inFlight` stays.
            let next = waiting[firstWaiting]
            firstWaiting += 1
            if firstWaiting > 1024, firstWaiting * 2 > waiting.count {
                waiting.removeFirst(firstWaiting)
                firstWaiting = 0
            }
            next.resume()
        } else {
            inFlight -= 1
        }
    }
}
