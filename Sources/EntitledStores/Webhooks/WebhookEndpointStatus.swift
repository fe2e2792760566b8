/// An endpoint's delivery as it is now: for `entitlectl webhooks`, the metrics and the log.
public struct WebhookEndpointStatus: Sendable, Hashable {
    public var name: String
    public var url: String
    /// Every change up to it is delivered, given up or not for this endpoint.
    public var cursor: UInt64
    /// The newest change the feed has shown the deliverer.
    public var newest: UInt64
    /// Messages read and not yet delivered, and how many of them are being sent now.
    public var queued: Int
    public var inFlight: Int
    public var setAside: WebhookEndpointState.SetAside?
    public var failed: [WebhookEndpointState.FailedMessage]
    public var counters: WebhookCounters

    /// How many changes the endpoint is behind the feed.
    public var lag: UInt64 { newest > cursor ? newest - cursor : 0 }
}

/// An endpoint's counts since the deliverer started.
public struct WebhookCounters: Sendable, Hashable {
    /// Messages the endpoint took (2xx).
    public var delivered = 0
    /// Messages given up after the retry period, and answers 410.
    public var failed = 0
    /// Tries that failed and will be made again.
    public var retried = 0
}

/// An admin request about an endpoint that cannot be carried out.
public struct WebhookAdminError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
