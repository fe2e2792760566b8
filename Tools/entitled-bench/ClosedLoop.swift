/// What the connections of a closed-loop measurement saw, merged.
struct ClosedLoopResult: Sendable {
    /// Latency in nanoseconds of every request started inside the measured window.
    var latencies: [UInt64] = []
    /// The start time (monotonic ns) of each of those requests, same order; filled only when asked for.
    var starts: [UInt64] = []
    /// Requests started in the window whose answer was an error, or a check that said inactive.
    var errors = 0
    var inactive = 0
    /// The first unexpected answer, for the report.
    var firstError: String?
    /// Every request sent, warm-up included.
    var sent = 0

    mutating func merge(_ other: ClosedLoopResult) {
        latencies += other.latencies
        starts += other.starts
        errors += other.errors
        inactive += other.inactive
        firstError = firstError ?? other.firstError
        sent += other.sent
    }
}

/// The closed loop: each connection, on its own thread, sends one request, waits for its answer, and
/// sends the next, until the deadline, the stop flag or the request cap. One request in flight per
/// connection, so the rate is what the server sustains at that many concurrent clients.
enum ClosedLoop {
    /// Runs `workload` on every connection from now until `deadline` (or `stop`).
    /// - Parameters:
    ///   - measureFrom: requests started before this instant are warm-up: sent, not counted.
    ///   - maxRequestsPerConnection: a bound on the loop besides time.
    ///   - recordStarts: also keep each request's start time (to pick the requests of a time window).
    static func run(
        connections: [TCPConnection],
        workload: Workload,
        measureFrom: UInt64,
        deadline: UInt64,
        stop: StopFlag? = nil,
        maxRequestsPerConnection: Int = 50_000_000,
        recordStarts: Bool = false
    ) throws -> ClosedLoopResult {
        let results = try onThreads(connections.count, name: "closed-loop") { index in
            try runOne(
                connection: connections[index], index: index, workload: workload, measureFrom: measureFrom,
                deadline: deadline, stop: stop, maxRequests: maxRequestsPerConnection, recordStarts: recordStarts
            )
        }
        var merged = ClosedLoopResult()
        for result in results { merged.merge(result) }
        return merged
    }

    private static func runOne(
        connection: TCPConnection, index: Int, workload: Workload, measureFrom: UInt64, deadline: UInt64,
        stop: StopFlag?, maxRequests: Int, recordStarts: Bool
    ) throws -> ClosedLoopResult {
        var encoder = RequestEncoder(workload, connection: index)
        let reader = LineReader(connection)
        var result = ClosedLoopResult()
        // Room for a typical run up front; appends beyond it grow the arrays geometrically (rarely).
        result.latencies.reserveCapacity(1 << 16)
        if recordStarts { result.starts.reserveCapacity(1 << 16) }
        var sequence = 0
        while sequence < maxRequests {
            let started = monotonicNanoseconds()
            if started >= deadline { break }
            // The flag is checked every 64 requests: often enough to stop within milliseconds.
            if sequence & 63 == 0, let stop, stop.isSet { break }
            encoder.encodeNext()
            try encoder.bytes.withUnsafeBytes { try connection.writeAll($0) }
            let line = try reader.readLine()
            let finished = monotonicNanoseconds()
            sequence += 1
            guard started >= measureFrom else { continue }
            result.latencies.append(finished - started)
            if recordStarts { result.starts.append(started) }
            switch encoder.classify(line) {
            case .success:
                break
            case .inactive:
                result.inactive += 1
            case .failure:
                result.errors += 1
                if result.firstError == nil { result.firstError = String(decoding: line.prefix(300), as: UTF8.self) }
            }
        }
        result.sent = sequence
        return result
    }
}
