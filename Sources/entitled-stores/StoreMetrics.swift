import EntitledStores
import Prometheus

/// The receiver's counters per store, served at `GET /metrics` in Prometheus's text format.
final class StoreMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

    /// A notification arrived on the store's route.
    func received(_ store: String) {
        registry.makeCounter(descriptor: Self.received, labels: [("store", store)]).increment()
    }

    /// A verified notification was answered 200: applied, duplicate, ignored or unmatched.
    func finished(_ store: String, _ outcome: NotificationOutcome) {
        registry.makeCounter(descriptor: Self.notifications, labels: [("store", store), ("outcome", outcome.name)]).increment()
    }

    /// A notification was refused (4xx), by reason.
    func refused(_ store: String, _ kind: NotificationRefusal.Kind) {
        registry.makeCounter(descriptor: Self.refused, labels: [("store", store), ("reason", kind.rawValue)]).increment()
    }

    /// A verified notification could not reach entitled (answered 503).
    func unavailable(_ store: String) {
        registry.makeCounter(descriptor: Self.unavailable, labels: [("store", store)]).increment()
    }

    /// A request was not complete within `--request-timeout`: answered 408 (or closed, if its answer had begun).
    func timedOut() {
        registry.makeCounter(descriptor: Self.timedOut).increment()
    }

    /// A connection was closed to make room at `--max-connections`: idle between requests, or reading one.
    func evicted(reading: Bool) {
        registry.makeCounter(descriptor: Self.evicted, labels: [("while", reading ? "reading" : "idle")]).increment()
    }

    /// A purchase reported at purchase time was answered: `granted`, or the failure's code.
    func purchase(_ store: String, _ outcome: String) {
        registry.makeCounter(descriptor: Self.purchases, labels: [("store", store), ("outcome", outcome)]).increment()
    }

    var text: String { registry.emitToString() }

    static var purchases: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "entitled_stores", metricName: "purchases", unitName: "total",
            helpText: "Purchases reported at purchase time (POST /purchases/...), by store and outcome (granted, or the error code)."
        )
    }

    static var received: MetricNameDescriptor {
        MetricNameDescriptor(namespace: "entitled_stores", metricName: "received", unitName: "total", helpText: "Notifications that arrived, by store.")
    }
    static var notifications: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "entitled_stores", metricName: "notifications", unitName: "total",
            helpText: "Verified notifications answered 200, by store and outcome (applied, duplicate, ignored, unmatched)."
        )
    }
    static var refused: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "entitled_stores", metricName: "refused", unitName: "total", helpText: "Notifications refused with 4xx, by store and reason."
        )
    }
    static var unavailable: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "entitled_stores", metricName: "unavailable", unitName: "total",
            helpText: "Verified notifications answered 503 because entitled could not take them, by store."
        )
    }
    static var timedOut: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "entitled_stores", metricName: "timed_out", unitName: "total",
            helpText: "Requests not complete within --request-timeout: answered 408 and their connection closed."
        )
    }
    static var evicted: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "entitled_stores", metricName: "evicted", unitName: "total",
            helpText: "Connections closed at --max-connections to make room for a new one, by what they were doing (idle, reading)."
        )
    }
}
