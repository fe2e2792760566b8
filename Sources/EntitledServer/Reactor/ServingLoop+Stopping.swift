/// How a loop stops: drained (no new connections; each connection answers what it has read, then
/// closes, within a deadline) or at once, then shut down on its own thread.
extension ServingLoop {
    /// Where a loop is in its life.
    enum Phase: Equatable {
        /// Serving connections and accepting new ones.
        case serving
        /// Stopping gracefully: no new connections, and the loop stops once every connection is done, or
        /// at `until` (monotonic ms) even if some still have work.
        case draining(until: UInt64)
        /// Stops at the end of this turn.
        case stopping

        // Pattern matches rather than `==`: read every turn, and a comparison of cases that carry values
        // is a call to the synthesized `==`.
        /// Whether the loop serves (neither draining nor stopping).
        var isServing: Bool {
            if case .serving = self { true } else { false }
        }

        /// Whether the loop stops at the end of this turn.
        var isStopping: Bool {
            if case .stopping = self { true } else { false }
        }
    }

    /// Graceful stop: no new connections, and every connection answers what it has read, then closes.
    func beginDraining(until deadline: UInt64) {
        // A stop at once asked for first stands (the loop leaves at the end of this turn).
        guard !phase.isStopping else { return }
        phase = .draining(until: deadline)
        for listener in listeners.values {
            epoll.remove(listener.descriptor)
            listener.close()
        }
        listeners.removeAll()
        for case let connection? in connections { connection.drain() }
    }

    /// Ends the loop: runs what was posted, closes every listener and connection, and lets
    /// `waitUntilStopped` return.
    func shutDown() {
        let remaining = postLock.withLock { () -> [() -> Void] in
            isRunning = false
            defer { posted.removeAll() }
            return posted
        }
        for task in remaining { task() }
        for listener in listeners.values {
            epoll.remove(listener.descriptor)
            listener.close()
        }
        listeners.removeAll()
        for case let connection? in connections {
            connection.close()
        }
        connections.removeAll()
        exited.lock()
        exited.unlock(withValue: true)
    }
}
