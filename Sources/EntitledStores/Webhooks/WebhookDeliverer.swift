import EntitledClient
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Every endpoint of a webhooks file, each delivered by its own `EndpointDelivery` (its own connection to
/// the feed, its own state file under `<state directory>/webhooks`): what `entitled-stores serve
/// --webhooks` runs, and what its metrics and admin routes read.
public final class WebhookDeliverer: Sendable {
    public let configuration: WebhooksConfiguration
    private let deliveries: [String: EndpointDelivery]
    /// The state directory's `LOCK`, held (`flock`) while this deliverer lives: two processes delivering
    /// from one state directory would each send everything and overwrite each other's progress.
    private let lockDescriptor: Int32

    /// Prepares a delivery for each endpoint, its state file read; nothing is sent yet. A new endpoint asks
    /// the feed where it starts once it runs.
    /// - Throws: `WebhookStateError` for a state file that cannot be read or the directory that cannot be made.
    public init(
        configuration: WebhooksConfiguration, entitled: ServerAddress, stateDirectory: String, transport: any WebhookTransport = HTTPWebhookTransport(),
        logger: Logger, tuning: EndpointDelivery.Tuning = EndpointDelivery.Tuning()
    ) throws(WebhookStateError) {
        self.configuration = configuration
        let directory = stateDirectory + "/webhooks"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw WebhookStateError(path: directory, problem: "cannot be created: \(error)")
        }
        let lockPath = directory + "/LOCK"
        lockDescriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockDescriptor >= 0 else { throw WebhookStateError(path: lockPath, problem: "cannot be opened: \(String(cString: strerror(errno)))") }
        guard flock(lockDescriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(lockDescriptor)
            throw WebhookStateError(path: directory, problem: "is in use by another entitled-stores delivering webhooks (its LOCK is held): give each one a state directory of its own")
        }
        var deliveries: [String: EndpointDelivery] = [:]
        for endpoint in configuration.endpoints {
            let feed = ServerWebhookFeed(address: entitled, token: configuration.feedToken)
            let file = WebhookStateFile(directory: directory, endpoint: endpoint.name)
            deliveries[endpoint.name] = EndpointDelivery(
                endpoint: endpoint, feed: feed, transport: transport, stateFile: file, state: try file.read(),
                start: configuration.starts[endpoint.name] ?? .newest, logger: logger, tuning: tuning
            )
        }
        self.deliveries = deliveries
    }

    deinit {
        close(lockDescriptor)  // releases the lock
    }

    public func start() async {
        for delivery in deliveries.values { await delivery.start() }
    }

    /// Stops every endpoint and writes its progress down.
    public func stop() async {
        for delivery in deliveries.values { await delivery.stop() }
    }

    /// Each endpoint's status, in the file's order.
    public func statuses() async -> [WebhookEndpointStatus] {
        var statuses: [WebhookEndpointStatus] = []
        for endpoint in configuration.endpoints {
            if let delivery = deliveries[endpoint.name] { statuses.append(await delivery.status()) }
        }
        return statuses
    }

    /// The endpoint named `name`.
    /// - Throws: `WebhookAdminError` when the file names none.
    public func delivery(_ name: String) throws(WebhookAdminError) -> EndpointDelivery {
        guard let delivery = deliveries[name] else {
            throw WebhookAdminError("no webhook endpoint is named \(name); the endpoints are \(configuration.endpoints.map(\.name).joined(separator: ", "))")
        }
        return delivery
    }

    /// The Prometheus lines of every endpoint.
    public func metricsText() async -> String {
        let statuses = await statuses()
        var lines: [String] = []
        func family(_ name: String, _ type: String, _ help: String, _ value: (WebhookEndpointStatus) -> Int) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
            for status in statuses { lines.append("\(name){endpoint=\"\(status.name)\"} \(value(status))") }
        }
        family("entitled_stores_webhook_delivered_total", "counter", "Webhook messages the endpoint took (2xx), since the start.") { $0.counters.delivered }
        family("entitled_stores_webhook_failed_total", "counter", "Webhook messages given up after the retry period, and 410 answers.") { $0.counters.failed }
        family("entitled_stores_webhook_retried_total", "counter", "Webhook tries that failed and are made again.") { $0.counters.retried }
        family("entitled_stores_webhook_lag_changes", "gauge", "Changes of the feed not yet delivered to the endpoint (or passed over by its filter).") { Int($0.lag) }
        family("entitled_stores_webhook_queued", "gauge", "Webhook messages read and not yet delivered.") { $0.queued }
        family("entitled_stores_webhook_set_aside", "gauge", "1 while the endpoint is set aside (410, or nothing delivered for the retry period) until an admin resumes it.") {
            $0.setAside == nil ? 0 : 1
        }
        family("entitled_stores_webhook_given_up", "gauge", "Webhook messages given up and kept for an admin's redelivery.") { $0.failed.count }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension WebhookEndpointStatus {
    /// The status as JSON, for `GET /webhooks` and `entitlectl webhooks`.
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("name", .string(name)), ("url", .string(url)), ("cursor", .number(String(cursor))), ("newest", .number(String(newest))),
            ("lag", .number(String(lag))), ("queued", .number(String(queued))), ("inFlight", .number(String(inFlight))),
            ("delivered", .number(String(counters.delivered))), ("failed", .number(String(counters.failed))),
            ("retried", .number(String(counters.retried))),
        ]
        if let setAside {
            members.append(("setAside", .object([("reason", .string(setAside.reason)), ("since", .string(setAside.since))])))
        }
        members.append(
            (
                "givenUp",
                .array(
                    failed.map { message in
                        .object([
                            ("id", .string(message.id)), ("type", .string(message.type)), ("sequence", .number(String(message.sequence))),
                            ("attempts", .number(String(message.attempts))), ("lastResult", .string(message.lastResult)),
                            ("firstTriedAt", .string(message.firstTriedAt)), ("gaveUpAt", .string(message.gaveUpAt)),
                        ])
                    }
                )
            )
        )
        return .object(members)
    }
}
