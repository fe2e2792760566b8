import Foundation

/// The servers of test processes that died without closing them (a crash, a kill, a debugger stopped):
/// nothing else would stop those postmasters, which outlive the test process (pg_ctl detaches them), and
/// each holds memory and a port until the machine restarts.
extension PostgresServer {
    /// The file, in a server's directory, naming the test process that made it.
    static let ownerFileName = "test-process.pid"

    /// Done once per test process, before its first server: kills the servers whose test process is gone
    /// and removes their directories. Servers of test processes still running are left alone.
    static let leftoversRemoved: Void = removeAbandonedServers()

    /// Kills the servers (under /tmp and the temporary directory) whose test process is gone, and
    /// removes their directories.
    public static func removeAbandonedServers() {
        for parent in Set(["/tmp", NSTemporaryDirectory()].map { URL(fileURLWithPath: $0).standardizedFileURL.path }) {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? [] where name.hasPrefix("entitled-pg-") {
                removeIfAbandoned(parent + "/" + name)
            }
        }
    }

    private static func removeIfAbandoned(_ directory: String) {
        guard let text = try? String(contentsOfFile: directory + "/" + ownerFileName, encoding: .utf8),
            let owner = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), owner != getpid(),
            Glibc.kill(owner, 0) != 0, errno == ESRCH
        else { return }
        if let lock = try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8),
            let first = lock.split(separator: "\n").first, let postmaster = pid_t(first.trimmingCharacters(in: .whitespaces)),
            postmaster > 1, commandLine(of: postmaster).contains(directory)
        {
            _ = Glibc.kill(-postmaster, SIGKILL)
            _ = Glibc.kill(postmaster, SIGKILL)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The process's command line, arguments joined by spaces; empty when it is gone. A postmaster's
    /// names its data directory: a process id read from an old lock file is only signalled if it does.
    private static func commandLine(of pid: pid_t) -> String {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return "" }
        return String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }
}
