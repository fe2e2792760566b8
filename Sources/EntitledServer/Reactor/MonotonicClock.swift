#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The loops' clocks: monotonic, read with `clock_gettime` (a vDSO call, no system call).

/// The monotonic clock in milliseconds.
func monotonicMilliseconds() -> UInt64 {
    monotonicNanoseconds() / 1_000_000
}

/// The monotonic clock at the kernel tick's resolution (a few milliseconds): read without a system call
/// and cheaper than the precise clock, for the idle timeout, which is read once every loop turn.
func coarseMonotonicMilliseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
    return UInt64(now.tv_sec) * 1_000 + UInt64(now.tv_nsec) / 1_000_000
}

/// The monotonic clock in nanoseconds: latencies, commit holds, busy polls.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
