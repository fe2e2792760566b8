/// What the closed-loop connections saw, merged: every request's start time and latency (monotonic ns).
struct ClosedLoopResult: Sendable {
    var starts: [UInt64] = []
    var latencies: [UInt64] = []
    /// Answers that were an error, or a check that said inactive.
    var errors = 0
    var inactive = 0
    /// The first unexpected answer, for the report.
    var firstError: String?
}

/// Checks in a closed loop, for the snapshot's check latency: each connection, on its own thread, sends
/// `{"op":"check","user":"u<random below users>","entitlement":"pro"}`, waits for its answer and sends the
/// next, until `stop` is set (or five minutes pass). One request in flight per connection, so the rate is
/// what the server sustains at that many concurrent clients.
enum ClosedLoop {
    /// Runs the loop on every connection while the calling thread runs `meanwhile`, which must set `stop`.
    static func run(connections: [TCPConnection], users: Int, seed: UInt64, stop: StopFlag, meanwhile: () throws -> Void) throws -> ClosedLoopResult {
        let deadline = monotonicNanoseconds() + nanoseconds(seconds: 300)
        let results = try onThreads(connections.count, name: "closed-loop", meanwhile: meanwhile) { index in
            var random = Xorshift(seed: seed &+ UInt64(index + 1))
            let (connection, reader) = (connections[index], LineReader(connections[index]))
            let head = Array(#"{"op":"check","user":"u"#.utf8)
            let tail = Array(#"","entitlement":"pro"}"#.utf8) + [10]
            var request: [UInt8] = []
            var result = ClosedLoopResult()
            result.latencies.reserveCapacity(1 << 16)
            result.starts.reserveCapacity(1 << 16)
            var sent = 0
            while true {
                let started = monotonicNanoseconds()
                // The flag is looked at every 64 requests: often enough to stop within milliseconds.
                if started >= deadline || (sent & 63 == 0 && stop.isSet) { break }
                request.removeAll(keepingCapacity: true)
                request += head
                request.appendDecimal(Int(random.next() % UInt64(max(1, users))))
                request += tail
                try connection.writeAll(request)
                let line = try reader.readLine()
                result.latencies.append(monotonicNanoseconds() - started)
                result.starts.append(started)
                sent += 1
                if line.starts(with: #"{"ok":true,"active":true"#) { continue }
                if line.starts(with: #"{"ok":true,"active":false"#) {
                    result.inactive += 1
                } else {
                    result.errors += 1
                    if result.firstError == nil { result.firstError = String(decoding: line.prefix(300), as: UTF8.self) }
                }
            }
            return result
        }
        return results.reduce(into: ClosedLoopResult()) { merged, result in
            merged.starts += result.starts
            merged.latencies += result.latencies
            merged.errors += result.errors
            merged.inactive += result.inactive
            merged.firstError = merged.firstError ?? result.firstError
        }
    }
}
