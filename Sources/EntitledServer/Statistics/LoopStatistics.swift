import Atomics
import EntitledWire

/// One event loop's counters: requests by operation, errors by code, connection events, and a latency
/// histogram per operation.
///
/// Written by its loop's thread only, read by any thread (`stats`, a metrics scrape). Each counter is an
/// atomic updated with a relaxed load and a relaxed store, not a read-modify-write: with one writer
/// nothing is lost, and on x86-64 and arm64 both are plain moves, so counting costs the check path a few
/// instructions and no shared cache line (a counter shared by the loops, as swift-metrics' counters are,
/// would bounce between cores on every request). Readers may see one counter a request ahead of another;
/// `stats` is a moment's reading, not a transaction.
///
/// The histograms are hand-written rather than HdrHistogram's `Histogram` for the same reason: that is a
/// value type only its owner may read, so another thread could read it only by stopping the loop.
final class LoopStatistics: @unchecked Sendable {
    static let operationCount = Request.Operation.allCases.count
    static let errorCodeCount = ErrorCode.allCases.count

    /// The connection events counted.
    enum Event: Int, CaseIterable {
        case accepted, refused, closedIdle
    }

    // Layout of `counters`: requests by operation, invalid lines, errors by code, events, latency buckets
    // (operation-major), the largest latency of each operation, the sum of each operation's latencies.
    private static let invalidOffset = operationCount
    private static let errorsOffset = invalidOffset + 1
    private static let eventsOffset = errorsOffset + errorCodeCount
    private static let latencyOffset = eventsOffset + Event.allCases.count
    private static let maximumOffset = latencyOffset + operationCount * LatencyBuckets.count
    private static let sumOffset = maximumOffset + operationCount
    private static let counterCount = sumOffset + operationCount

    private let counters: UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>

    init() {
        counters = .allocate(capacity: Self.counterCount)
        counters.initialize(repeating: UnsafeAtomic<UInt64>.Storage(0), count: Self.counterCount)
    }

    deinit {
        counters.deinitialize(count: Self.counterCount)
        counters.deallocate()
    }

    // MARK: Writing (the loop's thread only)

    @inline(__always)
    private func add(_ amount: UInt64, at offset: Int) {
        let counter = UnsafeAtomic<UInt64>(at: counters + offset)
        counter.store(counter.load(ordering: .relaxed) &+ amount, ordering: .relaxed)
    }

    /// A request of `operation` answered `nanoseconds` after its line was read; `error` when it failed.
    @inline(__always)
    func recordRequest(_ operation: Request.Operation, nanoseconds: UInt64, error: ErrorCode?) {
        let ordinal = operation.ordinal
        add(1, at: ordinal)
        add(1, at: Self.latencyOffset + ordinal * LatencyBuckets.count + LatencyBuckets.index(ofNanoseconds: nanoseconds))
        add(nanoseconds, at: Self.sumOffset + ordinal)
        let maximum = UnsafeAtomic<UInt64>(at: counters + Self.maximumOffset + ordinal)
        if nanoseconds > maximum.load(ordering: .relaxed) { maximum.store(nanoseconds, ordering: .relaxed) }
        if let error { recordError(error) }
    }

    /// A line answered with an error before it made a request: not JSON, no known op, refused, too long.
    func recordInvalidLine(_ error: ErrorCode) {
        add(1, at: Self.invalidOffset)
        recordError(error)
    }

    /// An error answer (counted by `recordRequest` and `recordInvalidLine` already).
    func recordError(_ error: ErrorCode) {
        add(1, at: Self.errorsOffset + error.ordinal)
    }

    func record(_ event: Event, count: UInt64 = 1) {
        add(count, at: Self.eventsOffset + event.rawValue)
    }

    // MARK: Reading (any thread)

    private func value(at offset: Int) -> UInt64 {
        UnsafeAtomic<UInt64>(at: counters + offset).load(ordering: .relaxed)
    }

    func requests(of operation: Request.Operation) -> UInt64 { value(at: operation.ordinal) }
    var invalidLines: UInt64 { value(at: Self.invalidOffset) }
    func errors(of code: ErrorCode) -> UInt64 { value(at: Self.errorsOffset + code.ordinal) }
    func count(of event: Event) -> UInt64 { value(at: Self.eventsOffset + event.rawValue) }

    /// Adds this loop's latency histogram of `operation` to `counts` (`LatencyBuckets.count` of them).
    func addLatency(of operation: Request.Operation, to counts: inout [UInt64]) {
        let start = Self.latencyOffset + operation.ordinal * LatencyBuckets.count
        for index in 0..<LatencyBuckets.count { counts[index] &+= value(at: start + index) }
    }

    /// The sum of the latencies of `operation` on this loop, in nanoseconds.
    func latencySum(of operation: Request.Operation) -> UInt64 {
        value(at: Self.sumOffset + operation.ordinal)
    }

    /// The largest latency of `operation` on this loop, in nanoseconds.
    func maximumLatency(of operation: Request.Operation) -> UInt64 {
        value(at: Self.maximumOffset + operation.ordinal)
    }
}
