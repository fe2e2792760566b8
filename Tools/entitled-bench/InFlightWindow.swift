import Foundation

/// The count of requests in flight on one connection, shared by its writer and its reader.
final class InFlightWindow: @unchecked Sendable {
    private let condition = NSCondition()
    private let capacity: Int
    private var inFlight = 0
    private var failed = false

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Waits until `lines` more fit (or nothing is in flight), then counts them as in flight.
    func reserve(_ lines: Int, deadline: UInt64) throws {
        condition.lock()
        defer { condition.unlock() }
        while inFlight + lines > capacity && inFlight > 0 && !failed {
            guard monotonicNanoseconds() < deadline else {
                throw BenchError("the load did not finish within its time limit: the server stalled")
            }
            _ = condition.wait(until: Date().addingTimeInterval(0.5))
        }
        if failed { throw BenchError("the reader of this connection failed") }
        inFlight += lines
    }

    func release(_ lines: Int) {
        condition.lock()
        inFlight -= lines
        condition.signal()
        condition.unlock()
    }

    func fail() {
        condition.lock()
        failed = true
        condition.broadcast()
        condition.unlock()
    }
}
