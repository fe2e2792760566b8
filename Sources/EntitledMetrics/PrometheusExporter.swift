import CoreMetrics
import EntitledServer
import EntitledWire
import NIOConcurrencyHelpers
import Prometheus

/// The server's counters in Prometheus' text format, for `GET /metrics`.
///
/// The server counts on its event loops in single-writer counters (`LoopStatistics`): a swift-metrics
/// counter bumped on every request would be an atomic shared by the loops, on the check path. So at each
/// scrape the exporter reads the counters once (`EntitledServer.statistics()`) and brings swift-metrics'
/// counters and gauges, kept by swift-prometheus, up to date: counters by what they grew since the last
/// scrape. The latency histogram is written here rather than through a swift-metrics `Timer`: the
/// Prometheus histogram takes one `record` (a lock, a pass over the buckets) per request and has no bulk
/// form, so an hour of 100,000 checks a second would cost a scrape 360 million calls.
public final class PrometheusExporter: Sendable {
    /// The histogram's upper bounds, in seconds: from 10 µs (a check) to 10 s (a stalled disk).
    public static let latencyBounds: [Double] = [
        0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
        0.5, 1, 2.5, 5, 10,
    ]

    private let server: EntitledServer
    private let registry = PrometheusCollectorRegistry()
    private let metrics: NIOLockedValueBox<Metrics>

    /// The swift-metrics handles, and what each counter had reached at the last scrape.
    private struct Metrics {
        var requests: [String: CoreMetrics.Counter] = [:]
        var errors: [String: CoreMetrics.Counter] = [:]
        var counters: [String: CoreMetrics.Counter] = [:]
        var gauges: [String: CoreMetrics.Gauge] = [:]
        var reported: [String: UInt64] = [:]
    }

    public init(server: EntitledServer) {
        self.server = server
        let factory = PrometheusMetricsFactory(registry: registry)
        var metrics = Metrics()
        for operation in Request.Operation.allCases {
            metrics.requests[operation.rawValue] = CoreMetrics.Counter(
                label: "entitled_requests_total", dimensions: [("op", operation.rawValue)], factory: factory
            )
        }
        for code in ErrorCode.allCases {
            metrics.errors[code.rawValue] = CoreMetrics.Counter(label: "entitled_errors_total", dimensions: [("code", code.rawValue)], factory: factory)
        }
        for name in Self.counterNames {
            metrics.counters[name] = CoreMetrics.Counter(label: name, dimensions: [], factory: factory)
        }
        for name in Self.gaugeNames {
            metrics.gauges[name] = CoreMetrics.Gauge(label: name, dimensions: [], factory: factory)
        }
        // Only a node of a cluster has a replica to report on: a standalone server does not show these at
        // 0, which an alert on `entitled_replication_connected` would take for a lost database.
        if server.statistics().replication != nil {
            for name in Self.replicationCounterNames {
                metrics.counters[name] = CoreMetrics.Counter(label: name, dimensions: [], factory: factory)
            }
            for name in Self.replicationGaugeNames {
                metrics.gauges[name] = CoreMetrics.Gauge(label: name, dimensions: [], factory: factory)
            }
        }
        CoreMetrics.Gauge(label: "entitled_build_info", dimensions: [("version", EntitledServer.version)], factory: factory).record(1)
        self.metrics = NIOLockedValueBox(metrics)
    }

    private static let counterNames = [
        "entitled_invalid_requests_total", "entitled_connections_accepted_total", "entitled_connections_refused_total",
        "entitled_connections_closed_idle_total", "entitled_log_written_bytes_total", "entitled_log_syncs_total",
        "entitled_snapshots_written_total", "entitled_log_outages_total", "entitled_log_groups_total",
        "entitled_log_group_changes_total",
    ]
    private static let gaugeNames = [
        "entitled_start_time_seconds", "entitled_uptime_seconds", "entitled_connections_open", "entitled_store_users",
        "entitled_store_devices", "entitled_store_memberships", "entitled_store_entitlements", "entitled_last_change",
        "entitled_log_changes_since_snapshot", "entitled_log_bytes_since_snapshot", "entitled_snapshot_last_change",
        "entitled_snapshot_size_bytes", "entitled_snapshot_last_write_timestamp_seconds",
        "entitled_snapshot_last_duration_seconds", "entitled_log_writable", "entitled_log_unwritable_since_timestamp_seconds",
        "entitled_log_needs_restart",
    ]

    private static let replicationCounterNames = [
        "entitled_replication_groups_committed_total", "entitled_replication_writes_committed_total",
        "entitled_replication_groups_failed_total", "entitled_replication_groups_redecided_total", "entitled_replication_reconnects_total",
        "entitled_replication_changes_replicated_total", "entitled_replication_catch_ups_total",
        "entitled_replication_divergences_total", "entitled_replication_history_marks_total", "entitled_replication_reloads_total",
    ]
    private static let replicationGaugeNames = [
        "entitled_replication_lag_changes", "entitled_replication_seconds_since_contact", "entitled_replication_connected",
        "entitled_replication_writable", "entitled_replication_listening", "entitled_replication_applied_sequence", "entitled_replication_known_sequence",
        "entitled_replication_snapshot_sequence", "entitled_replication_withholding_reads", "entitled_replication_clock_offset_seconds",
        "entitled_replication_clock_uncertainty_seconds",
    ]

    /// The metrics now, as the body of a `GET /metrics` answer (text format 0.0.4).
    public func scrape() -> [UInt8] {
        let statistics = server.statistics()
        metrics.withLockedValue { metrics in update(&metrics, from: statistics) }
        var text = registry.emitToBuffer()
        appendLatencyHistograms(to: &text)
        return text
    }

    private func update(_ metrics: inout Metrics, from statistics: ServerStatistics) {
        func advance(_ counter: CoreMetrics.Counter?, key: String, to value: UInt64) {
            guard let counter else { return }
            let before = metrics.reported[key] ?? 0
            if value > before { counter.increment(by: Int64(value - before)) }
            metrics.reported[key] = value
        }
        for (operation, count) in statistics.requests {
            advance(metrics.requests[operation], key: "op:" + operation, to: count)
        }
        for (code, count) in statistics.errors {
            advance(metrics.errors[code], key: "code:" + code, to: count)
        }
        let connections = statistics.connections
        let counts: [(String, UInt64)] = [
            ("entitled_invalid_requests_total", statistics.invalidRequests),
            ("entitled_connections_accepted_total", connections.accepted), ("entitled_connections_refused_total", connections.refused),
            ("entitled_connections_closed_idle_total", connections.closedIdle),
            ("entitled_log_written_bytes_total", UInt64(statistics.persistence?.logBytesWritten ?? 0)),
            ("entitled_log_syncs_total", UInt64(statistics.persistence?.logSyncs ?? 0)),
            ("entitled_snapshots_written_total", UInt64(statistics.persistence?.snapshotsWritten ?? 0)),
            ("entitled_log_outages_total", UInt64(statistics.persistence?.logOutages ?? 0)),
            // Their ratio is the mean group size: changes per write-and-sync of the log.
            ("entitled_log_groups_total", UInt64(statistics.persistence?.groupCommit?.groups ?? 0)),
            ("entitled_log_group_changes_total", UInt64(statistics.persistence?.groupCommit?.changes ?? 0)),
        ]
        for (name, value) in counts { advance(metrics.counters[name], key: name, to: value) }
        if let replication = statistics.replication {
            let replicated: [(String, UInt64)] = [
                ("entitled_replication_groups_committed_total", replication.groupsCommitted),
                ("entitled_replication_writes_committed_total", replication.writesCommitted),
                ("entitled_replication_groups_failed_total", replication.groupsFailed),
                ("entitled_replication_groups_redecided_total", replication.groupsRedecided),
                ("entitled_replication_reconnects_total", replication.reconnects),
                ("entitled_replication_changes_replicated_total", replication.changesReplicated),
                ("entitled_replication_catch_ups_total", replication.catchUps),
                // Any increase: a failover of the database lost changes this node had applied (and served).
                ("entitled_replication_divergences_total", replication.divergences),
                ("entitled_replication_history_marks_total", replication.historyMarks),
                ("entitled_replication_reloads_total", replication.reloads),
            ]
            for (name, value) in replicated { advance(metrics.counters[name], key: name, to: value) }
        }

        var gauges: [(String, Double)] = [
            ("entitled_start_time_seconds", Double(statistics.startedAt.millisecondsSinceEpoch) / 1000),
            ("entitled_uptime_seconds", Double(statistics.uptimeSeconds)),
            ("entitled_connections_open", Double(connections.open)),
            ("entitled_store_users", Double(statistics.store.users)), ("entitled_store_devices", Double(statistics.store.devices)),
            ("entitled_store_memberships", Double(statistics.store.memberships)),
            ("entitled_store_entitlements", Double(statistics.store.entitlements)),
        ]
        if let persistence = statistics.persistence {
            gauges += [
                ("entitled_last_change", Double(persistence.lastChange)),
                ("entitled_log_changes_since_snapshot", Double(persistence.changesSinceSnapshot)),
                ("entitled_log_bytes_since_snapshot", Double(persistence.logBytesSinceSnapshot)),
                ("entitled_snapshot_last_change", Double(persistence.snapshotChange)),
                ("entitled_snapshot_size_bytes", Double(persistence.snapshotBytes ?? 0)),
                // 0 while writes are refused (disk full or failed): the thing to alert on. Why is in `stats`.
                ("entitled_log_writable", persistence.writable ? 1 : 0),
                ("entitled_log_unwritable_since_timestamp_seconds", persistence.unwritable.map { Double($0.since.millisecondsSinceEpoch) / 1000 } ?? 0),
                ("entitled_log_needs_restart", persistence.unwritable.map { $0.resumesByItself ? 0 : 1 } ?? 0),
            ]
            if let writtenAt = persistence.snapshotWrittenAt {
                gauges.append(("entitled_snapshot_last_write_timestamp_seconds", Double(writtenAt.millisecondsSinceEpoch) / 1000))
            }
            if let milliseconds = persistence.snapshotMilliseconds {
                gauges.append(("entitled_snapshot_last_duration_seconds", Double(milliseconds) / 1000))
            }
        }
        if let replication = statistics.replication {
            gauges += [
                ("entitled_replication_lag_changes", Double(replication.lagChanges)),
                // -1 before the first contact: "never" must not read as "just now".
                ("entitled_replication_seconds_since_contact", replication.secondsSinceContact ?? -1),
                // 0 while the database is unreachable: the thing to alert on. Why is in `stats` (`lastError`).
                ("entitled_replication_connected", replication.connected ? 1 : 0),
                ("entitled_replication_writable", replication.writable ? 1 : 0),
                ("entitled_replication_listening", replication.listening ? 1 : 0),
                ("entitled_replication_applied_sequence", Double(replication.appliedSequence)),
                ("entitled_replication_known_sequence", Double(replication.knownSequence)),
                ("entitled_replication_snapshot_sequence", Double(replication.snapshotSequence)),
                // 1 while reads are answered `loading` (the replica is reloaded after a divergence).
                ("entitled_replication_withholding_reads", replication.withholdingReads ? 1 : 0),
                // How far the database's clock is ahead of this machine's: alert on its absolute value.
                ("entitled_replication_clock_offset_seconds", replication.clockOffsetSeconds ?? 0),
                ("entitled_replication_clock_uncertainty_seconds", replication.clockUncertaintySeconds ?? 0),
            ]
        }
        for (name, value) in gauges { metrics.gauges[name]?.record(value) }
    }

    /// `entitled_request_duration_seconds`, a histogram per operation run at least once.
    private func appendLatencyHistograms(to text: inout [UInt8]) {
        let name = "entitled_request_duration_seconds"
        var lines = "# HELP \(name) Time from reading a request to its answer being ready (a change: until the log holds it).\n"
        lines += "# TYPE \(name) histogram\n"
        for operation in Request.Operation.allCases {
            let histogram = server.counters.cumulativeLatency(of: operation, upperBounds: Self.latencyBounds)
            guard histogram.total > 0 else { continue }
            let op = operation.rawValue
            for (bound, count) in zip(Self.latencyBounds, histogram.counts) {
                lines += "\(name)_bucket{op=\"\(op)\",le=\"\(bound)\"} \(count)\n"
            }
            lines += "\(name)_bucket{op=\"\(op)\",le=\"+Inf\"} \(histogram.total)\n"
            lines += "\(name)_sum{op=\"\(op)\"} \(histogram.seconds)\n"
            lines += "\(name)_count{op=\"\(op)\"} \(histogram.total)\n"
        }
        text += Array(lines.utf8)
    }
}
