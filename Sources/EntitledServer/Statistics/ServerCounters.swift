import EntitledCore
import EntitledWire
import NIOConcurrencyHelpers

/// Every loop's counters, with what the server knows beside them (when it started, how many connections
/// are open), read together into a `ServerStatistics` for `stats` and the metrics endpoint.
public final class ServerCounters: Sendable {
    /// One per event loop, in loop order.
    let loops: [LoopStatistics]
    public let startedAt: Timestamp
    private let startedMonotonic: UInt64
    private let openConnections: NIOLockedValueBox<OpenConnections>

    init(loopCount: Int, startedAt: Timestamp, openConnections: NIOLockedValueBox<OpenConnections>) {
        loops = (0..<loopCount).map { _ in LoopStatistics() }
        self.startedAt = startedAt
        startedMonotonic = monotonicNanoseconds()
        self.openConnections = openConnections
    }

    /// The counters now, with the store's size and the data directory's state from `processor`.
    public func report(processor: RequestProcessor) -> ServerStatistics {
        let operations = Request.Operation.allCases
        let requests = operations.map { operation in
            (operation: operation.rawValue, count: loops.reduce(0) { $0 &+ $1.requests(of: operation) })
        }
        let errors = ErrorCode.allCases.map { code in
            (code: code.rawValue, count: loops.reduce(0) { $0 &+ $1.errors(of: code) })
        }
        var latency: [(operation: String, summary: ServerStatistics.LatencySummary)] = []
        for operation in operations {
            let histogram = latencyHistogram(of: operation)
            guard histogram.total > 0 else { continue }
            let maximum = loops.map { $0.maximumLatency(of: operation) }.max() ?? 0
            func micros(_ quantile: Double) -> Double {
                // Never above the largest value seen: the top bucket's middle may be.
                min(LatencyBuckets.value(atQuantile: quantile, of: histogram.counts, total: histogram.total), Double(maximum)) / 1000
            }
            let summary = ServerStatistics.LatencySummary(
                count: histogram.total, p50: micros(0.5), p90: micros(0.9), p99: micros(0.99), p999: micros(0.999),
                max: Double(maximum) / 1000
            )
            latency.append((operation.rawValue, summary))
        }
        let connections = ServerStatistics.Connections(
            open: openConnections.withLockedValue { $0.total },
            accepted: total(of: .accepted), refused: total(of: .refused), closedIdle: total(of: .closedIdle)
        )
        return ServerStatistics(
            server: "entitled " + EntitledServer.version,
            startedAt: startedAt,
            uptimeSeconds: Int64((monotonicNanoseconds() &- startedMonotonic) / 1_000_000_000),
            connections: connections,
            requests: requests,
            invalidRequests: loops.reduce(0) { $0 &+ $1.invalidLines },
            errors: errors,
            latency: latency,
            store: processor.store.sizes,
            persistence: processor.writes.status.persistence.map { ServerStatistics.Persistence($0) },
            replication: processor.writes.status.replication
        )
    }

    /// Every loop's latency histogram of `operation`, summed, for an exporter: how many requests took at
    /// most each of `upperBounds` (seconds, ascending), how many in all, and their summed time in seconds.
    /// A bucket of the histogram that straddles a bound counts below it when its middle does (see
    /// `LatencyBuckets`: within 7%).
    public func cumulativeLatency(of operation: Request.Operation, upperBounds: [Double]) -> (counts: [UInt64], total: UInt64, seconds: Double) {
        let histogram = latencyHistogram(of: operation)
        var cumulative = [UInt64](repeating: 0, count: upperBounds.count)
        var bound = 0
        var seen: UInt64 = 0
        for (index, count) in histogram.counts.enumerated() where count > 0 {
            let middle = LatencyBuckets.middle(of: index) / 1e9
            while bound < upperBounds.count, middle > upperBounds[bound] {
                cumulative[bound] = seen
                bound += 1
            }
            seen += count
        }
        while bound < upperBounds.count {
            cumulative[bound] = seen
            bound += 1
        }
        let nanoseconds = loops.reduce(0) { $0 &+ $1.latencySum(of: operation) }
        return (cumulative, histogram.total, Double(nanoseconds) / 1e9)
    }

    /// Every loop's latency histogram of `operation`, summed: bucket counts (`LatencyBuckets`) and total.
    func latencyHistogram(of operation: Request.Operation) -> (counts: [UInt64], total: UInt64) {
        var counts = [UInt64](repeating: 0, count: LatencyBuckets.count)
        for loop in loops { loop.addLatency(of: operation, to: &counts) }
        return (counts, counts.reduce(0, &+))
    }

    func total(of event: LoopStatistics.Event) -> UInt64 {
        loops.reduce(0) { $0 &+ $1.count(of: event) }
    }
}
