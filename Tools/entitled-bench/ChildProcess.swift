import Foundation

/// A process the benchmark started: its standard output and error are read by threads as they come (with
/// the time each line arrived, which times the ready line), and it is registered with `cleanup` so that no
/// run, failed or interrupted, leaves it behind.
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    let name: String
    /// When `posix_spawn` was called (monotonic ns).
    let launchedAt: UInt64
    let output, errorOutput: OutputCapture
    private let lock = NSLock()
    private var exitStatus: Int32?

    private init(pid: pid_t, name: String, launchedAt: UInt64, output: Int32, errorOutput: Int32) {
        (self.pid, self.name, self.launchedAt) = (pid, name, launchedAt)
        self.output = OutputCapture(descriptor: output, name: "\(name)-stdout")
        self.errorOutput = OutputCapture(descriptor: errorOutput, name: "\(name)-stderr")
    }

    /// Starts `executable` with `arguments`, standard input from /dev/null, output captured.
    static func launch(_ executable: String, _ arguments: [String], name: String) throws -> ChildProcess {
        // Both pipes' ends are closed on exec, so that later children do not inherit them and keep them open
        // (children are spawned from one thread, so nothing can fork in between).
        var (outPipe, errPipe): ([Int32], [Int32]) = ([0, 0], [0, 0])
        guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else { throw BenchError.system("pipe") }
        for descriptor in outPipe + errPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let launchedAt = monotonicNanoseconds()
        let spawned = cleanup.registering {
            let status = posix_spawn(&pid, executable, &actions, nil, argv, environ)
            return status == 0 ? pid : -status
        }
        // The child has its copies; the parent keeps only the read ends (so EOF means the child is gone).
        close(outPipe[1])
        close(errPipe[1])
        guard spawned > 0 else {
            close(outPipe[0])
            close(errPipe[0])
            throw BenchError.system("posix_spawn \(executable)", -spawned)
        }
        return ChildProcess(pid: spawned, name: name, launchedAt: launchedAt, output: outPipe[0], errorOutput: errPipe[0])
    }

    /// Waits for a standard output line containing `fragment`; returns it and when it arrived. Throws when
    /// the process exits first (with the end of its standard error), or after `timeout` seconds.
    func waitForOutputLine(containing fragment: String, timeout: Double) throws -> (line: String, at: UInt64) {
        if let found = output.waitForLine(containing: fragment, timeout: timeout) { return found }
        let what = hasExited() ? "exited (status \(exitDescription))" : "printed no \"\(fragment)\" within \(timeout) s"
        let tail = errorOutput.text.split(separator: "\n").suffix(8).joined(separator: "\n    ")
        throw BenchError("\(name) (pid \(pid)) \(what) before it was ready; its standard error ends with:\n    \(tail)")
    }

    /// Sends `signal` to the process, unless it has been reaped (its pid may be reused).
    func send(_ signal: Int32) {
        lock.withLock { if exitStatus == nil { kill(pid, signal) } }
    }

    /// Waits for the process to exit, at most `timeout` seconds; returns whether it did.
    @discardableResult
    func waitForExit(timeout: Double) -> Bool {
        let deadline = monotonicNanoseconds() + nanoseconds(seconds: timeout)
        while !hasExited() {
            guard monotonicNanoseconds() < deadline else { return false }
            usleep(2_000)
        }
        return true
    }

    /// Reaps the process if it has exited (never blocks).
    func hasExited() -> Bool {
        lock.withLock {
            var status: Int32 = 0
            guard exitStatus == nil, waitpid(pid, &status, WNOHANG) == pid else { return exitStatus != nil }
            exitStatus = status
            cleanup.forget(pid: pid)
            return true
        }
    }

    /// How it ended: `exit 0`, `signal 9`, or `running` (the <sys/wait.h> macros spelled out).
    var exitDescription: String {
        lock.withLock {
            guard let status = exitStatus else { return "running" }
            return status & 0x7F == 0 ? "exit \((status >> 8) & 0xFF)" : "signal \(status & 0x7F)"
        }
    }

    /// Stops the process: `signal` (SIGTERM: graceful), then SIGKILL if it is not gone after `timeout`.
    /// Returns how long it took to exit, in seconds, and whether it had to be killed.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, timeout: Double = 30) -> (seconds: Double, killed: Bool) {
        let started = monotonicNanoseconds()
        send(signal)
        let killed = !waitForExit(timeout: timeout)
        if killed {
            send(SIGKILL)
            waitForExit(timeout: 10)
        }
        return (Double(monotonicNanoseconds() - started) / 1e9, killed)
    }

    /// Resident memory in bytes (VmRSS), or another `kB` field of /proc/PID/status (VmHWM: the peak).
    func residentBytes(field: String = "VmRSS") -> Int? {
        let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status?.split(separator: "\n").first { $0.hasPrefix(field + ":") }
        return line?.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
    }
}

/// The output of a child on one pipe, read by a thread of its own into memory (at most 8 MiB, so that a
/// chatty server cannot exhaust it) as lines with the time each arrived. Reading continuously also keeps
/// the child from blocking on a full pipe.
final class OutputCapture: @unchecked Sendable {
    private let condition = NSCondition()
    private var lines: [(text: String, at: UInt64)] = []
    private var storedBytes = 0
    private var finished = false

    init(descriptor: Int32, name: String) {
        let thread = Thread { [self] in readAll(descriptor) }
        thread.name = name
        thread.start()
    }

    private func readAll(_ descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var partial: [UInt8] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            let now = monotonicNanoseconds()
            var complete: [String] = []
            for byte in buffer.prefix(max(0, count)) {
                if byte == 0x0A {
                    complete.append(String(decoding: partial, as: UTF8.self))
                    partial.removeAll(keepingCapacity: true)
                } else if partial.count < 1 << 16 {
                    partial.append(byte)
                }
            }
            if count <= 0 && !partial.isEmpty { complete.append(String(decoding: partial, as: UTF8.self)) }
            condition.withLock {
                for line in complete where storedBytes < 8 << 20 {
                    storedBytes += line.utf8.count + 1
                    lines.append((line, now))
                }
                finished = count <= 0
                condition.broadcast()
            }
            if count <= 0 { break }
        }
        close(descriptor)
    }

    /// The first line containing `fragment`, waiting up to `timeout` seconds; nil when the pipe closed (the
    /// process is gone) or the time ran out.
    func waitForLine(containing fragment: String, timeout: Double) -> (line: String, at: UInt64)? {
        let deadline = Date().addingTimeInterval(timeout)
        return condition.withLock {
            var checked = 0
            while true {
                while checked < lines.count {
                    if lines[checked].text.contains(fragment) { return (lines[checked].text, lines[checked].at) }
                    checked += 1
                }
                // One last look after the end: lines may have arrived together with it.
                if finished || !condition.wait(until: deadline) {
                    return lines[checked...].first { $0.text.contains(fragment) }.map { ($0.text, $0.at) }
                }
            }
        }
    }

    /// Waits (at most `timeout` seconds) until the pipe has closed and every line is read: a child that has
    /// exited may still have output in the pipe.
    func waitUntilFinished(timeout: Double) {
        let deadline = Date().addingTimeInterval(timeout)
        condition.withLock { while !finished && condition.wait(until: deadline) {} }
    }

    var allLines: [String] { condition.withLock { lines.map(\.text) } }

    var text: String { allLines.joined(separator: "\n") }
}
