import NIOConcurrencyHelpers

/// Wakes the replica's loop: a write was queued, a notification came, the node is stopping. A signal
/// given while the loop is busy is kept, so that the loop's next wait returns at once.
final class WakeSignal: Sendable {
    private let state = NIOLockedValueBox<(signaled: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func signal() {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.signaled = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at the next signal (at once if one came since the last wait), or after `limit`.
    func wait(upTo limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.nextSignal() }
            group.addTask {
                // Only a timer that ran out signals: a cancelled one (the signal came first) must not
                // leave a signal behind for the next wait.
                do {
                    try await Task.sleep(for: limit)
                    self.signal()
                } catch {}
            }
            await group.next()
            group.cancelAll()
        }
    }

    private func nextSignal() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLockedValue { state -> Bool in
                if state.signaled {
                    state.signaled = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
