import EntitledClient

/// One endpoint's status as `GET /webhooks` gives it, read from its JSON.
public struct WebhookEndpoint: Sendable, Hashable {
    /// A message given up after the retry period, kept for redelivery.
    public struct GivenUpMessage: Sendable, Hashable {
        public var id: String
        public var type: String
        public var sequence: Int
        public var attempts: Int
        public var lastResult: String
        public var firstTriedAt: String
        public var gaveUpAt: String
    }

    /// Why an endpoint stopped delivering until an admin resumes it, and since when (RFC 3339).
    public struct SetAside: Sendable, Hashable {
        public var reason: String
        public var since: String
    }

    public var name: String
    public var url: String
    public var cursor: Int
    public var newest: Int
    public var lag: Int
    public var queued: Int
    public var inFlight: Int
    public var delivered: Int
    public var failed: Int
    public var retried: Int
    /// `nil` while the endpoint delivers.
    public var setAside: SetAside?
    public var givenUp: [GivenUpMessage]

    /// Reads one endpoint's object; `nil` when a field is missing or of another type.
    public init?(json: JSONValue) {
        guard let name = json["name"]?.stringValue, let url = json["url"]?.stringValue,
            let cursor = json["cursor"]?.intValue, let newest = json["newest"]?.intValue, let lag = json["lag"]?.intValue,
            let queued = json["queued"]?.intValue, let inFlight = json["inFlight"]?.intValue,
            let delivered = json["delivered"]?.intValue, let failed = json["failed"]?.intValue, let retried = json["retried"]?.intValue,
            let givenUp = json["givenUp"]?.arrayValue
        else { return nil }
        self.name = name
        self.url = url
        self.cursor = cursor
        self.newest = newest
        self.lag = lag
        self.queued = queued
        self.inFlight = inFlight
        self.delivered = delivered
        self.failed = failed
        self.retried = retried
        if let aside = json["setAside"], !aside.isNull {
            guard let reason = aside["reason"]?.stringValue, let since = aside["since"]?.stringValue else { return nil }
            setAside = SetAside(reason: reason, since: since)
        }
        var messages: [GivenUpMessage] = []
        for message in givenUp {
            guard let id = message["id"]?.stringValue, let type = message["type"]?.stringValue,
                let sequence = message["sequence"]?.intValue, let attempts = message["attempts"]?.intValue,
                let lastResult = message["lastResult"]?.stringValue, let firstTriedAt = message["firstTriedAt"]?.stringValue,
                let gaveUpAt = message["gaveUpAt"]?.stringValue
            else { return nil }
            messages.append(.init(id: id, type: type, sequence: sequence, attempts: attempts, lastResult: lastResult, firstTriedAt: firstTriedAt, gaveUpAt: gaveUpAt))
        }
        self.givenUp = messages
    }

    /// The endpoints of a `GET /webhooks` answer; `nil` when it is not `{"endpoints":[...]}` of endpoints.
    public static func list(from json: JSONValue) -> [WebhookEndpoint]? {
        guard let items = json["endpoints"]?.arrayValue else { return nil }
        var endpoints: [WebhookEndpoint] = []
        for item in items {
            guard let endpoint = WebhookEndpoint(json: item) else { return nil }
            endpoints.append(endpoint)
        }
        return endpoints
    }
}
