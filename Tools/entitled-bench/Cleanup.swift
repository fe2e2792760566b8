import Foundation

/// Every server process and temporary directory the benchmark made, so that all of them are gone at the
/// end: after a normal run, after an error, and after SIGINT or SIGTERM to the benchmark.
final class Cleanup: @unchecked Sendable {
    private let lock = NSLock()
    private var pids: Set<pid_t> = []
    private var directories: [String] = []
    /// Set once the benchmark is being torn down: from then on nothing new may be started or made, or a
    /// thread still measuring could leave a server behind after the cleanup ran.
    private var closed = false

    /// Runs `spawn` (which returns a pid, or a non-positive error) and registers the pid under the lock, so
    /// that an interrupting signal either sees the new process or comes before it exists.
    func registering(_ spawn: () -> pid_t) -> pid_t {
        lock.withLock {
            guard !closed else { return -ECANCELED }
            let pid = spawn()
            if pid > 0 { pids.insert(pid) }
            return pid
        }
    }

    /// The process was reaped; it must no longer be signalled (its pid may be reused).
    func forget(pid: pid_t) {
        _ = lock.withLock { pids.remove(pid) }
    }

    /// Makes a fresh directory under `parent` and registers it for removal.
    func makeTemporaryDirectory(in parent: String, prefix: String) throws -> String {
        var template = Array("\(parent)/\(prefix)-XXXXXX".utf8CString)
        return try lock.withLock {
            guard !closed else { throw BenchError("the benchmark is stopping") }
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { throw BenchError.system("mkdtemp in \(parent)") }
            directories.append(String(cString: made))
            return String(cString: made)
        }
    }

    /// Removes a directory made by `makeTemporaryDirectory` now (its server must be stopped).
    func removeDirectory(_ path: String) {
        lock.withLock { directories.removeAll { $0 == path } }
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Kills and reaps every registered process still there and removes every directory; nothing can be
    /// started or made afterwards.
    func runAll() {
        let (running, leftovers) = lock.withLock {
            closed = true
            defer { (pids, directories) = ([], []) }
            return (pids, directories)
        }
        for pid in running {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        // Newest first (a data directory before the folder holding it); a few tries, because a thread still
        // measuring may be removing part of the same tree at this moment.
        for directory in leftovers.reversed() {
            for _ in 0..<5 {
                try? FileManager.default.removeItem(atPath: directory)
                guard FileManager.default.fileExists(atPath: directory) else { break }
                usleep(20_000)
            }
        }
    }

    /// On SIGINT or SIGTERM: clean up, then exit with 128 + the signal. SIGPIPE is ignored: a server that
    /// drops a connection must become an error on that connection, not end the benchmark.
    ///
    /// A real handler, not a dispatch signal source: a shell starts a background job with SIGINT ignored,
    /// and on Linux a dispatch source does not reliably see a signal whose disposition is "ignore". The
    /// handler only writes the signal's number to a pipe (async-signal-safe); a thread does the rest.
    func installSignalHandlers() {
        signal(SIGPIPE, SIG_IGN)
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let readEnd = ends[0]
        signalPipe = ends[1]
        let watcher = Thread { [self] in
            var number: UInt8 = 0
            while read(readEnd, &number, 1) < 0 && errno == EINTR {}
            printError("entitled-bench: interrupted (signal \(number)); stopping the servers and removing temporary directories")
            runAll()
            exit(128 + Int32(number))
        }
        watcher.name = "signals"
        watcher.start()
        for number in [SIGINT, SIGTERM] {
            signal(number) { received in
                var byte = UInt8(truncatingIfNeeded: received)
                _ = write(signalPipe, &byte, 1)
            }
        }
    }
}

/// The write end of the pipe the signal handler reports to; set once, before the handler is installed.
nonisolated(unsafe) private var signalPipe: Int32 = -1

/// The one registry of this process.
let cleanup = Cleanup()
