import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Measures how much CPU processes other than the benchmark and its server used over a stretch of time.
/// On a small shared machine a compiler running next to the benchmark halves its numbers; this makes such
/// a run visible in the report instead of silently wrong, and lets the benchmark wait for a quiet moment.
struct CPUMeter {
    private let started: UInt64
    private let busy: Int
    private let own: Int
    private let server: Int
    private let serverPID: pid_t?

    /// Starts measuring; `serverPID` is a server of ours whose CPU is not "other" either.
    init(serverPID: pid_t? = nil) {
        started = monotonicNanoseconds()
        busy = Self.machineBusyTicks() ?? 0
        own = Self.processTicks("self") ?? 0
        self.serverPID = serverPID
        server = serverPID.flatMap { Self.processTicks("\($0)") } ?? 0
    }

    /// The average number of cores other processes kept busy since `init` (call before the server exits).
    /// `newServer` is a server of ours started after `init`: all of its CPU time is ours too.
    func otherCores(newServer: pid_t? = nil) -> Double? {
        guard let busyNow = Self.machineBusyTicks(), let ownNow = Self.processTicks("self") else { return nil }
        let serverNow = serverPID.flatMap { Self.processTicks("\($0)") } ?? server
        let newServerTicks = newServer.flatMap { Self.processTicks("\($0)") } ?? 0
        let seconds = Double(monotonicNanoseconds() - started) / 1e9
        guard seconds > 0 else { return nil }
        let ticks = (busyNow - busy) - (ownNow - own) - (serverNow - server) - newServerTicks
        return max(0, Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK))) / seconds)
    }

    /// Waits (at most `limit` seconds) until other processes use less than `threshold` cores over a
    /// 0.5 s sample; returns the seconds waited and the last sample.
    static func waitForQuiet(threshold: Double, limit: Double) -> (waited: Double, otherCores: Double?) {
        let started = monotonicNanoseconds()
        var last: Double?
        for _ in 0..<10_000 {
            let meter = CPUMeter()
            sleep(seconds: 0.5)
            last = meter.otherCores()
            let waited = Double(monotonicNanoseconds() - started) / 1e9
            if (last ?? 0) < threshold || waited >= limit { return (waited, last) }
        }
        return (Double(monotonicNanoseconds() - started) / 1e9, last)
    }

    /// Ticks all CPUs spent in processes since boot: user, nice and system of /proc/stat. Interrupt time
    /// is left out: the loopback traffic of the benchmark itself is mostly accounted there.
    private static func machineBusyTicks() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return nil }
        let fields = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard fields.count >= 8 else { return nil }
        return fields[0] + fields[1] + fields[2]
    }

    /// User plus system ticks of a process, all threads (`self` or a pid), from /proc/<pid>/stat.
    static func processTicks(_ process: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(process)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // After the command name in parentheses (which may hold spaces): state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }
}
