import EntitledStores
import Prometheus

extension StoreMetrics {
    /// A reconciliation run finished: what it checked, corrected and failed, by store, and the drift by kind.
    func reconciled(_ summary: Reconciler.Summary, finishedAt seconds: Int64) {
        registry.makeCounter(descriptor: Self.reconciliationRuns).increment()
        for (store, count) in summary.checked {
            registry.makeCounter(descriptor: Self.reconciliationChecked, labels: [("store", store)]).increment(by: Int64(count))
        }
        for (store, kinds) in summary.drift {
            for (kind, count) in kinds {
                registry.makeCounter(descriptor: Self.reconciliationDrift, labels: [("store", store), ("kind", kind)]).increment(by: Int64(count))
            }
        }
        for (store, count) in summary.failed {
            registry.makeCounter(descriptor: Self.reconciliationFailed, labels: [("store", store)]).increment(by: Int64(count))
        }
        registry.makeGauge(descriptor: Self.reconciliationLastRun).set(Double(seconds))
    }

    static var reconciliationRuns: MetricNameDescriptor {
        MetricNameDescriptor(namespace: "entitled_stores", metricName: "reconciliation_runs", unitName: "total", helpText: "Reconciliation runs finished.")
    }
    static var reconciliationChecked: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "entitled_stores", metricName: "reconciliation_checked", unitName: "total",
            helpText: "Memberships compared with their store by reconciliation runs, by store."
        )
    }
    static var reconciliationDrift: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "entitled_stores", metricName: "reconciliation_drift", unitName: "total",
            helpText: "Writes reconciliation made where entitled disagreed with the store (a missed notification), by store and kind (grant, renewal, expiration, refund, ...)."
        )
    }
    static var reconciliationFailed: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "entitled_stores", metricName: "reconciliation_failed", unitName: "total",
            helpText: "Memberships reconciliation could not compare (the store or entitled failed, the store does not know the purchase), by store."
        )
    }
    static var reconciliationLastRun: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "entitled_stores", metricName: "reconciliation_last_run", unitName: "timestamp_seconds",
            helpText: "When the last reconciliation run finished (Unix seconds): alert when it is older than two intervals."
        )
    }
}
