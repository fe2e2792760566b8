import Foundation

/// Runs blocking work (raw sockets, a million pipelined requests) on a thread of its own and awaits it.
///
/// Swift concurrency has as many pool threads as cores, two here: a test blocked in `recv` on one of them
/// halves what every other test running meanwhile gets, and timing-sensitive neighbours (idle timeouts,
/// backpressure stalls) then fail for reasons that are not theirs.
public func onDedicatedThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Swift.Result { try body() })
        }
        thread.start()
    }
}

/// Values handed to a dedicated thread and back, used by one thread at a time (the awaiting test waits).
public final class Handoff<Value>: @unchecked Sendable {
    public var value: Value
    public init(_ value: Value) { self.value = value }
}
