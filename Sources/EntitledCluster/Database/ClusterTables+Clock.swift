import PostgresNIO

#if canImport(Glibc)
import Glibc
#endif

/// The database's clock, as read from a node (`DatabaseClock` keeps the offset).
extension ClusterTables {
    /// One reading of the database server's clock: how far it is ahead of this machine's (microseconds,
    /// negative when behind), taken at the middle of the round trip, and half that round trip, the most the
    /// reading can be off by.
    func clockReading() async throws -> ClockReading {
        let sent = Self.microsecondsSinceEpoch()
        let result = try await query("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint", "the database's clock")
        let received = Self.microsecondsSinceEpoch()
        for row in result.rows {
            let database = try row.decode(Int64.self)
            let middle = sent + (received - sent) / 2
            return ClockReading(offsetMicroseconds: database - middle, uncertaintyMicroseconds: max(0, (received - sent) / 2))
        }
        throw ClusterError.corrupt("the database did not tell its time")
    }

    /// The most certain of `count` readings taken one after another: the one with the shortest round trip.
    func bestClockReading(of count: Int = 3) async throws -> ClockReading {
        var best = try await clockReading()
        for _ in 1..<max(count, 1) {
            let reading = try await clockReading()
            if reading.uncertaintyMicroseconds < best.uncertaintyMicroseconds { best = reading }
        }
        return best
    }

    /// This machine's wall clock, in microseconds since 1970.
    static func microsecondsSinceEpoch() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1000
    }
}

/// A reading of the database's clock against this machine's.
struct ClockReading: Sendable {
    var offsetMicroseconds: Int64
    var uncertaintyMicroseconds: Int64
}
