import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure of the benchmark itself or of a server it drives, with a sentence for the operator.
struct BenchError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }

    /// An error for a failed system call, naming it and `errno`.
    static func system(_ call: String, _ code: Int32 = errno) -> BenchError {
        BenchError("\(call) failed: \(String(cString: strerror(code))) (errno \(code))")
    }
}

/// Monotonic time in nanoseconds: latencies and deadlines must not jump with the wall clock, and reading
/// it costs no allocation in the request loops.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// Nanoseconds from seconds, for deadlines.
func nanoseconds(seconds: Double) -> UInt64 {
    UInt64(max(0, seconds) * 1e9)
}

/// Sleeps the calling thread (the benchmark drives servers from plain threads, not tasks).
func sleep(seconds: Double) {
    Thread.sleep(forTimeInterval: seconds)
}

/// Writes `line` to standard error (the C `stderr` global is not concurrency-safe in Swift 6).
func printError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

/// Prints a progress line to standard error at once, so the table on standard output stays clean.
func progress(_ line: String) {
    printError("· " + line)
}

/// A Boolean that one thread sets and others poll: how the main thread ends open-ended request loops.
final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false

    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    func set() {
        lock.lock()
        stopped = true
        lock.unlock()
    }
}

/// Runs `body(index)` for `count` indexes, each on its own OS thread (blocking sockets need one thread per
/// connection), waits for all of them and returns their results in index order, or the first error.
/// Every body must bound itself in time; this waits for as long as they run.
func onThreads<T: Sendable>(_ count: Int, name: String, _ body: @escaping @Sendable (Int) throws -> T) throws -> [T] {
    let slots = ResultSlots<T>(count: count)
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            slots.set(index, Result { try body(index) })
            group.leave()
        }
        thread.name = "\(name)-\(index)"
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
    return try slots.results()
}

/// The results of `onThreads`, written by the worker threads under a lock.
private final class ResultSlots<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [Result<T, any Error>?]

    init(count: Int) {
        slots = Array(repeating: nil, count: count)
    }

    func set(_ index: Int, _ result: Result<T, any Error>) {
        lock.lock()
        slots[index] = result
        lock.unlock()
    }

    func results() throws -> [T] {
        lock.lock()
        defer { lock.unlock() }
        return try slots.map { slot in
            guard let slot else { throw BenchError("a worker thread ended without a result") }
            return try slot.get()
        }
    }
}

/// Facts about the machine for the report: the numbers mean little without them.
struct MachineInfo: Codable {
    let cpus: Int
    let kernel: String
    let memoryGiB: Double
    /// The file system type of the directory the servers write to (fsync on tmpfs would be free).
    let workFileSystem: String

    static func current(workDirectory: String) -> MachineInfo {
        var names = utsname()
        uname(&names)
        let release = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let system = withUnsafeBytes(of: &names.sysname) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return MachineInfo(
            cpus: ProcessInfo.processInfo.activeProcessorCount,
            kernel: "\(system) \(release)",
            memoryGiB: (Double(ProcessInfo.processInfo.physicalMemory) / Double(1 << 30) * 10).rounded() / 10,
            workFileSystem: fileSystemType(of: workDirectory)
        )
    }

    /// The type of the file system holding `path`, from /proc/self/mounts (the longest matching mount).
    private static func fileSystemType(of path: String) -> String {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return "unknown" }
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var best: (mountPoint: String, type: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let mountPoint = String(fields[1])
            let inside = resolved == mountPoint || resolved.hasPrefix(mountPoint == "/" ? "/" : mountPoint + "/")
            if inside && mountPoint.count >= (best?.mountPoint.count ?? -1) {
                best = (mountPoint, String(fields[2]))
            }
        }
        return best.map { "\($0.type) (\($0.mountPoint))" } ?? "unknown"
    }
}

/// A body running on its own thread while the caller does something else, joined with `value()`.
final class Background<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var result: Result<T, any Error>?

    init(name: String, _ body: @escaping @Sendable () throws -> T) {
        let thread = Thread { [self] in
            let outcome = Result { try body() }
            lock.lock()
            result = outcome
            lock.unlock()
            done.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Waits for the body to end and returns its result. The body must bound itself in time.
    func value() throws -> T {
        done.wait()
        done.signal()  // later calls return at once
        lock.lock()
        defer { lock.unlock() }
        guard let result else { throw BenchError("a background thread ended without a result") }
        return try result.get()
    }
}

/// Writes a report as pretty, key-sorted JSON to `path` and says where it went.
func writeJSON<Report: Encodable>(_ report: Report, to path: String) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    do {
        try encoder.encode(report).write(to: URL(fileURLWithPath: path))
        print("\nJSON: \(path)")
    } catch {
        throw BenchError("cannot write the JSON file \(path): \(error)")
    }
}

/// Raises this process's soft limit on open files to `wanted`, within the hard limit; fails when the hard
/// limit is lower, naming it.
func raiseDescriptorLimit(to wanted: Int) throws {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { throw BenchError("cannot read the open file limit") }
    guard limit.rlim_cur < rlim_t(wanted) else { return }
    guard limit.rlim_max >= rlim_t(wanted) else {
        throw BenchError("the open file limit's hard value \(limit.rlim_max) is below the \(wanted) needed; raise it (ulimit -Hn)")
    }
    limit.rlim_cur = rlim_t(wanted)
    guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { throw BenchError("cannot raise the open file limit to \(wanted)") }
}
