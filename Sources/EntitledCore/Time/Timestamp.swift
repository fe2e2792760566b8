#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A point in time with millisecond precision, counted from the Unix epoch (1970-01-01T00:00:00Z).
///
/// Every time the service keeps or compares is a `Timestamp`: comparing two of them is one integer
/// comparison, which matters on the check path, and they serialise to RFC 3339 without Foundation
/// (see `Timestamp+RFC3339.swift`).
public struct Timestamp: Hashable, Comparable, Sendable {
    /// Milliseconds since 1970-01-01T00:00:00Z; negative before it.
    public var millisecondsSinceEpoch: Int64

    @inlinable
    public init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    /// Whole seconds since the epoch.
    @inlinable
    public init(secondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = secondsSinceEpoch * 1000
    }

    @inlinable
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch
    }

    /// This time plus `span`: its calendar months first (UTC; the day of the month kept, or the month's
    /// last day when it has fewer), then its fixed milliseconds (backwards for a negative span). Saturates
    /// instead of overflowing.
    public func adding(_ span: TimeSpan) -> Timestamp {
        let start = span.months == 0 ? self : addingCalendarMonths(span.months)
        let (sum, overflow) = start.millisecondsSinceEpoch.addingReportingOverflow(span.milliseconds)
        if overflow { return Timestamp(millisecondsSinceEpoch: span.milliseconds > 0 ? .max : .min) }
        return Timestamp(millisecondsSinceEpoch: sum)
    }

    /// The current wall-clock time (`CLOCK_REALTIME`, a vDSO call on Linux: no system call, no allocation).
    public static func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(millisecondsSinceEpoch: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }
}
