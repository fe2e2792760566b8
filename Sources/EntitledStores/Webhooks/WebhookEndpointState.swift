/// What a deliverer keeps of one endpoint across restarts (`WebhookStateFile`): how far it delivered, whether
/// it is set aside, and the messages it gave up on. It keeps no message's body: a message is read again
/// from the change feed to be redelivered, so an erasure (which takes the person out of the feed) leaves
/// nothing of them here either.
public struct WebhookEndpointState: Codable, Sendable, Hashable {
    /// Every change up to this one is delivered, given up (`failed`), or not for this endpoint.
    public var cursor: UInt64
    /// Why the endpoint gets nothing until an admin resumes it; `nil` while it is delivered to.
    public var setAside: SetAside?
    /// The messages given up on after the retry period, oldest first (at most `maximumFailed`).
    public var failed: [FailedMessage]

    /// The most given-up messages kept; older ones are forgotten first (and counted in the metrics).
    public static let maximumFailed = 1000

    public init(cursor: UInt64, setAside: SetAside? = nil, failed: [FailedMessage] = []) {
        self.cursor = cursor
        self.setAside = setAside
        self.failed = failed
    }

    public struct SetAside: Codable, Sendable, Hashable {
        public var reason: String
        /// RFC 3339.
        public var since: String
    }

    /// A message given up on: which change, how often it was tried, and what the last try said.
    public struct FailedMessage: Codable, Sendable, Hashable {
        public var id: String
        public var type: String
        public var sequence: UInt64
        public var attempts: Int
        public var lastResult: String
        /// RFC 3339: when it was first tried and when it was given up.
        public var firstTriedAt: String
        public var gaveUpAt: String
    }
}
