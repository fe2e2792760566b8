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

    var text: String { registry.emitToString() }

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
}
