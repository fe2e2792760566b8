import Foundation

/// What an import run has finished, kept in a file so that a run killed at any point (kill -9 included)
/// and started again skips what it finished and does the rest: one line per identifier finished
/// (`done<TAB>key`), and for a listing (Stripe's "all subscriptions") the cursor after which every item is
/// finished (`cursor<TAB>name<TAB>value`).
///
/// Lines are written 64 at a time, or when 100 ms passed since the last write (a write each costs an
/// import of thousands a second a tenth of its time; a slow import writes each line as it comes), a cursor
/// at once; forced to the disk every `syncEvery` lines, and both at the end. A line lost to a crash only makes
/// the next run import that identifier again, which changes nothing: every write of an import is idempotent
/// (grants name the store's transaction, events carry ids made from the store's).
public final class ImportJournal: @unchecked Sendable {
    public let path: String
    /// Keys finished by earlier runs (read when the journal was opened).
    public private(set) var finished: Set<String> = []
    /// Listing cursors of earlier runs, by listing name.
    public private(set) var cursors: [String: String] = [:]
    private let descriptor: Int32
    private var unsynced = 0
    /// Lines not written yet, and how many.
    private var pending = ""
    private var pendingLines = 0
    private var lastWritten = ContinuousClock.now
    private let syncEvery: Int
    private let lock = NSLock()

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public init(path: String, syncEvery: Int = 256) throws(Failure) {
        self.path = path
        self.syncEvery = syncEvery
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                switch (fields.first, fields.count) {
                case ("done"?, 2): finished.insert(String(fields[1]))
                case ("cursor"?, 3): cursors[String(fields[1])] = String(fields[2])
                default: continue  // a line cut by a crash
                }
            }
        }
        let directory = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Failure(description: "cannot open the import journal \(path): \(String(cString: strerror(errno)))") }
        // A line cut by a crash would glue itself to the next one: start on a fresh line.
        write("\n")
    }

    deinit {
        lock.withLock { flushPending() }
        fsync(descriptor)
        close(descriptor)
    }

    /// Whether an earlier run finished `key`.
    public func isFinished(_ key: String) -> Bool {
        lock.withLock { finished.contains(key) }
    }

    /// Records `key` finished, in the file only: this run does not meet it again (an identifier repeated in
    /// one input is imported twice, which changes nothing), and a run of a million keys keeps its memory flat.
    public func markFinished(_ key: String) {
        write("done\t\(key)\n")
    }

    /// Every item of listing `name` up to `value` is finished.
    public func markCursor(_ name: String, _ value: String) {
        lock.withLock { cursors[name] = value }
        write("cursor\t\(name)\t\(value)\n", now: true)
    }

    public func cursor(_ name: String) -> String? {
        lock.withLock { cursors[name] }
    }

    /// Writes what is pending and forces it to the disk.
    public func sync() {
        lock.withLock {
            flushPending()
            unsynced = 0
        }
        fsync(descriptor)
    }

    private func write(_ line: String, now: Bool = false) {
        let syncNow: Bool = lock.withLock {
            pending += line
            pendingLines += 1
            unsynced += 1
            if now || pendingLines >= 64 || ContinuousClock.now - lastWritten >= .milliseconds(100) { flushPending() }
            return unsynced >= syncEvery
        }
        if syncNow { sync() }
    }

    /// Writes the pending lines; the lock is held.
    private func flushPending() {
        guard pendingLines > 0 else { return }
        var bytes = Array(pending.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Foundation.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written <= 0 {
                if errno == EINTR { continue }
                break  // a full disk: the lines are lost, and their identifiers are imported again next run
            }
            offset += written
        }
        pending = ""
        pendingLines = 0
        lastWritten = .now
    }
}
