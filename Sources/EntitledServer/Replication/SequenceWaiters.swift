import NIOConcurrencyHelpers

/// The connections whose read (`minSeq`) waits for the store to apply a change, shared by every loop:
/// whatever advances the store (a local write, a cluster's committed write, changes another node made)
/// calls `advanced(to:)`, which posts a wake-up to each connection whose change is now applied, on that
/// connection's own loop.
final class SequenceWaiters: Sendable {
    private struct Waiter {
        let connection: UncheckedConnection
        let sequence: UInt64
    }

    private let waiters = NIOLockedValueBox([ObjectIdentifier: Waiter]())

    /// Wakes `connection` (`ServedConnection.sequenceReached()`) once the store has applied `sequence`.
    /// The caller looks at the store again after registering: a change applied in between is not missed.
    func wait(_ connection: ServedConnection, for sequence: UInt64) {
        waiters.withLockedValue { $0[ObjectIdentifier(connection)] = Waiter(connection: UncheckedConnection(connection), sequence: sequence) }
    }

    /// `connection` waits no more (answered, timed out, or closed).
    func cancel(_ connection: ServedConnection) {
        _ = waiters.withLockedValue { $0.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    /// The store has applied every change through `sequence`. One uncontended lock when nobody waits,
    /// which is what every write pays.
    func advanced(to sequence: UInt64) {
        let due = waiters.withLockedValue { waiters -> [UncheckedConnection] in
            guard !waiters.isEmpty else { return [] }
            var due: [UncheckedConnection] = []
            for (key, waiter) in waiters where waiter.sequence <= sequence {
                due.append(waiter.connection)
                waiters.removeValue(forKey: key)
            }
            return due
        }
        for connection in due {
            connection.value.loop.execute { connection.value.sequenceReached() }
        }
    }
}
