import EntitledCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The time a cluster node records and answers by: the database server's clock, as measured from this
/// node, and never earlier than the newest change its replica holds.
///
/// Why: every node stamps what it decides (a grant's `createdAt`, a revoke's `revokedAt`, each audit
/// entry's time) and answers `check` for "now". On their own clocks, a node an hour ahead made grants an
/// hour in the future, and a revoke of one on another node was recorded an hour before the grant. On the
/// database's clock the nodes agree within a reading's uncertainty (half a round trip to the database);
/// and since a change is decided on a replica holding every change it depends on, never stamping earlier
/// than the replica's newest change makes each change's time at least that of every change before it on
/// the same subject, so times and change numbers order a history the same way.
///
/// Read on every check (`now()`): two relaxed atomic loads besides the machine's clock, no lock.
final class DatabaseClock: Sendable {
    /// Microseconds added to this machine's clock: the database's clock minus this machine's.
    private let offset = Atomic<Int64>(0)
    /// Half the round trip of the reading the offset came from (microseconds); -1 before the first.
    private let uncertainty = Atomic<Int64>(-1)
    /// The newest change's time (milliseconds): no earlier time is given.
    private let floor = Atomic<Int64>(.min)

    /// The most the newest change's time may be ahead of the database's clock and still hold the clock
    /// back: a change stamped further ahead (by a node of a release before this clock, with its own clock
    /// wrong) must not move "now" into the future for every check.
    static let floorLeadLimit: Int64 = 5_000

    func now() -> Timestamp {
        Timestamp(millisecondsSinceEpoch: max(databaseMilliseconds(), floor.load(ordering: .relaxed)))
    }

    /// The database's time by this machine's clock and the offset (milliseconds).
    private func databaseMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let local = Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
        return local + offset.load(ordering: .relaxed) / 1000
    }

    /// Takes `reading` as the offset from now on.
    func adopt(_ reading: ClockReading) {
        offset.store(reading.offsetMicroseconds, ordering: .relaxed)
        uncertainty.store(reading.uncertaintyMicroseconds, ordering: .relaxed)
    }

    /// Never gives a time before `time` (the newest change the replica applied).
    func raiseFloor(to time: Timestamp?) {
        guard let time, time.millisecondsSinceEpoch <= databaseMilliseconds() + Self.floorLeadLimit else { return }
        var current = floor.load(ordering: .relaxed)
        while current < time.millisecondsSinceEpoch {
            let (exchanged, original) = floor.compareExchange(
                expected: current, desired: time.millisecondsSinceEpoch, ordering: .relaxed
            )
            if exchanged { return }
            current = original
        }
    }

    /// The database's clock minus this machine's and the reading's uncertainty (seconds); `nil` before
    /// the first reading.
    var reading: (offsetSeconds: Double, uncertaintySeconds: Double)? {
        let uncertainty = uncertainty.load(ordering: .relaxed)
        guard uncertainty >= 0 else { return nil }
        return (Double(offset.load(ordering: .relaxed)) / 1e6, Double(uncertainty) / 1e6)
    }
}
