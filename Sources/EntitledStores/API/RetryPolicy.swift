/// How a store API call is tried again: 429 (after its `Retry-After`, when the store sends one), a 5xx, a
/// timeout or no answer, with exponential backoff and full jitter (AWS Architecture Blog, "Exponential
/// Backoff And Jitter": a random wait between zero and the capped exponential, so that many callers stopped
/// at one moment do not come back at one moment).
public struct RetryPolicy: Sendable, Hashable {
    /// Tries in all, the first included; 1 never retries.
    public var attempts: Int
    /// The backoff's first cap; it doubles with every retry up to `maximumDelay`.
    public var initialDelay: Duration
    public var maximumDelay: Duration
    /// The longest `Retry-After` honoured; a store asking for longer ends the call (`rateLimited`), so that
    /// one identifier does not hold a run for hours.
    public var longestRetryAfter: Duration
    /// How long one try may take, answer body included.
    public var timeout: Duration

    public init(attempts: Int, initialDelay: Duration, maximumDelay: Duration, longestRetryAfter: Duration, timeout: Duration) {
        self.attempts = max(1, attempts)
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.longestRetryAfter = longestRetryAfter
        self.timeout = timeout
    }

    /// For imports, backfills and reconciliation: patient (about two minutes of retries), since nobody waits
    /// on a single call.
    public static let patient = RetryPolicy(
        attempts: 8, initialDelay: .milliseconds(250), maximumDelay: .seconds(30), longestRetryAfter: .seconds(120), timeout: .seconds(30)
    )

    /// For a live notification or a purchase report: one try, since the store delivers the notification again
    /// (answered 503) and the app's backend is waiting.
    public static let once = RetryPolicy(
        attempts: 1, initialDelay: .zero, maximumDelay: .zero, longestRetryAfter: .zero, timeout: .seconds(15)
    )

    /// The wait before retry number `retry` (1 for the first retry): a random duration up to
    /// `min(maximumDelay, initialDelay * 2^(retry-1))`.
    func backoff(beforeRetry retry: Int, using random: inout some RandomNumberGenerator) -> Duration {
        let cap = min(maximumDelay, initialDelay * (1 << min(retry - 1, 20)))
        let capNanoseconds = cap.components.seconds * 1_000_000_000 + cap.components.attoseconds / 1_000_000_000
        guard capNanoseconds > 0 else { return .zero }
        return .nanoseconds(Int64.random(in: 0...capNanoseconds, using: &random))
    }
}
