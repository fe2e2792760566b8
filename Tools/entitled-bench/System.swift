import Foundation

/// A failure of the benchmark or of a server it drives, as a sentence for the operator.
struct BenchError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }

    /// A failed system call, named with `errno`.
    static func system(_ call: String, _ code: Int32 = errno) -> BenchError {
        BenchError("\(call) failed: \(String(cString: strerror(code))) (errno \(code))")
    }
}

/// Monotonic nanoseconds: latencies and deadlines must not jump with the wall clock.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

func nanoseconds(seconds: Double) -> UInt64 {
    UInt64(max(0, seconds) * 1e9)
}

/// Now, as the reports write it (ISO 8601, UTC).
func timestamp() -> String {
    ISO8601DateFormatter().string(from: Date())
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

/// A progress line, on standard error so that the table on standard output stays clean.
func progress(_ line: String) {
    printError("· " + line)
}

/// A Boolean that one thread sets and others poll: how open-ended request loops are ended.
final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false

    var isSet: Bool { lock.withLock { stopped } }

    func set() { lock.withLock { stopped = true } }
}

/// Runs `body(index)` for `count` indexes, each on a thread of its own (blocking sockets need one per
/// connection), while the calling thread runs `meanwhile`; returns the results in index order, or the error
/// that came first in time. Every body must bound itself in time: this waits for as long as they run.
func onThreads<T: Sendable>(_ count: Int, name: String, meanwhile: () throws -> Void = {}, _ body: @escaping @Sendable (Int) throws -> T) throws -> [T] {
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
    let ownOutcome = Result { try meanwhile() }
    group.wait()
    try ownOutcome.get()
    return try slots.results()
}

/// The results of `onThreads`, written by the worker threads under a lock.
private final class ResultSlots<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [T?]
    private var firstError: (any Error)?

    init(count: Int) {
        slots = Array(repeating: nil, count: count)
    }

    func set(_ index: Int, _ result: Result<T, any Error>) {
        lock.withLock {
            do { slots[index] = try result.get() } catch { firstError = firstError ?? error }
        }
    }

    func results() throws -> [T] {
        try lock.withLock {
            if let firstError { throw firstError }
            return slots.compactMap { $0 }
        }
    }
}

/// Writes a report as pretty, key-sorted JSON to `path`, after a blank line below the table.
func writeJSON(_ report: some Encodable, to path: String) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    print("")
    try write(try encoder.encode(report), to: path, naming: "JSON")
}

/// Writes a result file (the JSON, the chart) to `path` and says where it went.
func write(_ data: Data, to path: String, naming what: String) throws {
    do { try data.write(to: URL(fileURLWithPath: path), options: .atomic) } catch { throw BenchError("cannot write the \(what) \(path): \(error)") }
    print("\(what): \(path)")
}
