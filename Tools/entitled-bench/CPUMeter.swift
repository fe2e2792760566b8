import Foundation

/// How much CPU processes other than the benchmark and its servers used over a stretch of time: on a small
/// shared machine a compiler beside the benchmark halves its numbers, and the report should say so.
struct CPUMeter {
    private let started = monotonicNanoseconds()
    private let busy = Self.machineBusyTicks() ?? 0
    private let own = Self.processTicks("self") ?? 0
    private let serverPID: pid_t?
    private let server: Int

    /// Starts measuring; `serverPID` is a server of ours, whose CPU is not "other" either.
    init(serverPID: pid_t? = nil) {
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

    /// Seconds of CPU (user and system, all threads) process `pid` has used so far; nil where unreadable.
    static func processSeconds(_ pid: pid_t) -> Double? {
        processTicks("\(pid)").map { Double($0) / Double(sysconf(Int32(_SC_CLK_TCK))) }
    }

    /// Ticks all CPUs spent in processes since boot: user, nice and system of /proc/stat. Interrupt time is
    /// left out: the benchmark's own loopback traffic is mostly accounted there.
    private static func machineBusyTicks() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8), let line = text.split(separator: "\n").first,
            line.hasPrefix("cpu ")
        else { return nil }
        let fields = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        return fields.count >= 8 ? fields[0] + fields[1] + fields[2] : nil
    }

    /// User plus system ticks of a process (`self` or a pid), all threads, from /proc/PID/stat.
    private static func processTicks(_ process: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(process)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return nil }
        // After the command name in parentheses (which may hold spaces): utime is field 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }
}
