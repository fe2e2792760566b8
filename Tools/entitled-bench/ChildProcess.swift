import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A server process the benchmark started: its standard output and error are read by threads as they come
/// (with the time each line arrived, which times the ready line), and it is registered with `Cleanup` so
/// that no run, failed or interrupted, leaves it behind.
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    let name: String
    /// When `posix_spawn` was called (monotonic ns).
    let launchedAt: UInt64
    let output: OutputCapture
    let errorOutput: OutputCapture
    private let lock = NSLock()
    private var exitStatus: Int32?

    private init(pid: pid_t, name: String, launchedAt: UInt64, output: OutputCapture, errorOutput: OutputCapture) {
        self.pid = pid
        self.name = name
        self.launchedAt = launchedAt
        self.output = output
        self.errorOutput = errorOutput
    }

    /// Starts `executable` with `arguments`, standard input from /dev/null, output captured.
    static func launch(_ executable: String, _ arguments: [String], name: String) throws -> ChildProcess {
        let outPipe = try makePipe()
        let errPipe = try makePipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe.write, 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe.write, 2)

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let launchedAt = monotonicNanoseconds()
        let spawned = cleanup.registering {
            let status = posix_spawn(&pid, executable, &actions, nil, argv, environ)
            return status == 0 ? pid : -status
        }
        // The child has its copies; the parent keeps only the read ends (so EOF means the child is gone).
        close(outPipe.write)
        close(errPipe.write)
        guard spawned > 0 else {
            close(outPipe.read)
            close(errPipe.read)
            throw BenchError.system("posix_spawn \(executable)", -spawned)
        }
        let child = ChildProcess(
            pid: spawned, name: name, launchedAt: launchedAt,
            output: OutputCapture(descriptor: outPipe.read, name: "\(name)-stdout"),
            errorOutput: OutputCapture(descriptor: errPipe.read, name: "\(name)-stderr")
        )
        return child
    }

    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { throw BenchError.system("pipe") }
        // Close-on-exec, so later children do not inherit the ends and keep a pipe open. (Glibc's module
        // has no pipe2; children are spawned from one thread only, so nothing can fork in between.)
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return (descriptors[0], descriptors[1])
    }

    /// Waits for a standard output line containing `fragment`; returns it and when it arrived.
    /// - Throws: when the process exits first (with the end of its standard error), or after `timeout`.
    func waitForOutputLine(containing fragment: String, timeout: Double) throws -> (line: String, at: UInt64) {
        if let found = output.waitForLine(containing: fragment, timeout: timeout) { return found }
        let exited = hasExited()
        let tail = errorOutput.text.split(separator: "\n").suffix(8).joined(separator: "\n    ")
        throw BenchError(
            "\(name) (pid \(pid)) \(exited ? "exited (status \(exitDescription))" : "printed no \"\(fragment)\" within \(timeout) s") before it was ready; its standard error ends with:\n    \(tail)"
        )
    }

    /// Sends `signal` to the process (if it has not been reaped yet).
    func send(_ signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if exitStatus == nil { kill(pid, signal) }
    }

    /// Waits for the process to exit, at most `timeout` seconds; returns whether it did.
    @discardableResult
    func waitForExit(timeout: Double) -> Bool {
        let deadline = monotonicNanoseconds() + nanoseconds(seconds: timeout)
        while true {
            if hasExited() { return true }
            guard monotonicNanoseconds() < deadline else { return false }
            usleep(2_000)
        }
    }

    /// Reaps the process if it has exited (never blocks).
    func hasExited() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if exitStatus != nil { return true }
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        guard reaped == pid else { return false }
        exitStatus = status
        cleanup.forget(pid: pid)
        return true
    }

    /// How it ended: `exit 0`, `signal 9`, or `running`.
    var exitDescription: String {
        lock.lock()
        defer { lock.unlock() }
        guard let status = exitStatus else { return "running" }
        // The <sys/wait.h> macros, spelled out (Swift does not import them).
        let signal = status & 0x7F
        return signal == 0 ? "exit \((status >> 8) & 0xFF)" : "signal \(signal)"
    }

    /// Stops the process: `signal` (SIGTERM: graceful), then SIGKILL if it is not gone after `timeout`.
    /// Returns how long it took to exit, in seconds, and whether it had to be killed.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, timeout: Double = 30) -> (seconds: Double, killed: Bool) {
        let started = monotonicNanoseconds()
        send(signal)
        if waitForExit(timeout: timeout) { return (Double(monotonicNanoseconds() - started) / 1e9, false) }
        send(SIGKILL)
        waitForExit(timeout: 10)
        return (Double(monotonicNanoseconds() - started) / 1e9, true)
    }

    /// The resident memory of the process in bytes, from /proc (nil where there is no /proc).
    func residentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}

/// The output of a child on one pipe, read by its own thread into memory (capped, so a chatty server
/// cannot exhaust it) as lines with the time each arrived. Reading continuously also keeps the child from
/// blocking on a full pipe.
final class OutputCapture: @unchecked Sendable {
    private let condition = NSCondition()
    private var lines: [(text: String, at: UInt64)] = []
    private var partial: [UInt8] = []
    private var storedBytes = 0
    private var finished = false
    private static let maximumBytes = 8 << 20

    init(descriptor: Int32, name: String) {
        let thread = Thread { [self] in readAll(descriptor) }
        thread.name = name
        thread.start()
    }

    private func readAll(_ descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            let now = monotonicNanoseconds()
            condition.lock()
            for byte in buffer[0..<count] {
                if byte == 0x0A {
                    append(String(decoding: partial, as: UTF8.self), at: now)
                    partial.removeAll(keepingCapacity: true)
                } else if partial.count < 1 << 16 {
                    partial.append(byte)
                }
            }
            condition.broadcast()
            condition.unlock()
        }
        close(descriptor)
        condition.lock()
        if !partial.isEmpty { append(String(decoding: partial, as: UTF8.self), at: monotonicNanoseconds()) }
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Caller holds the lock.
    private func append(_ line: String, at time: UInt64) {
        guard storedBytes < Self.maximumBytes else { return }
        storedBytes += line.utf8.count + 1
        lines.append((line, time))
    }

    /// The first line containing `fragment`, waiting up to `timeout` seconds; nil when the pipe closed
    /// (the process is gone) or the time ran out.
    func waitForLine(containing fragment: String, timeout: Double) -> (line: String, at: UInt64)? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        var checked = 0
        while true {
            while checked < lines.count {
                if lines[checked].text.contains(fragment) { return (lines[checked].text, lines[checked].at) }
                checked += 1
            }
            if finished || !condition.wait(until: deadline) {
                // One last look: lines may have arrived together with the end.
                return lines[checked...].first { $0.text.contains(fragment) }.map { ($0.text, $0.at) }
            }
        }
    }

    /// Waits until the pipe has closed and every line is read (at most `timeout` seconds): a child that
    /// has exited may still have output in the pipe that this reader has not taken yet.
    @discardableResult
    func waitUntilFinished(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !finished {
            if !condition.wait(until: deadline) { return finished }
        }
        return true
    }

    /// Every line so far.
    var allLines: [String] {
        condition.lock()
        defer { condition.unlock() }
        return lines.map(\.text)
    }

    var text: String {
        allLines.joined(separator: "\n")
    }
}
