import Foundation

/// What an import run has finished, kept in a file so that a run killed at any point (kill -9 included)
/// and started again skips what it finished and does the rest: one line per identifier finished
/// (`done<TAB>key`), and for a listing (Stripe's "all subscriptions") the cursor after which every item is
/// finished (`cursor<TAB>name<TAB>value`).
///
/// Lines are appended and forced to the disk every `syncEvery` lines and at the end. A line lost to a crash
/// only makes the next run import that identifier again, which changes nothing: every write of an import
/// is idempotent (grants name the store's transaction, events carry ids made from the store's).
public final class ImportJournal: @unchecked Sendable {
    public let path: String
    /// Keys finished by earlier runs.
    public private(set) var finished: Set<String> = []
    /// Listing cursors of earlier runs, by listing name.
    public private(set) var cursors: [String: String] = [:]
    private let descriptor: Int32
    private var unsynced = 0
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
        fsync(descriptor)
        close(descriptor)
    }

    public func isFinished(_ key: String) -> Bool {
        lock.withLock { finished.contains(key) }
    }

    public func markFinished(_ key: String) {
        lock.withLock { _ = finished.insert(key) }
        write("done\t\(key)\n")
    }

    /// Every item of listing `name` up to `value` is finished.
    public func markCursor(_ name: String, _ value: String) {
        lock.withLock { cursors[name] = value }
        write("cursor\t\(name)\t\(value)\n")
    }

    public func cursor(_ name: String) -> String? {
        lock.withLock { cursors[name] }
    }

    /// Forces what was written to the disk.
    public func sync() {
        lock.withLock { unsynced = 0 }
        fsync(descriptor)
    }

    private func write(_ line: String) {
        let bytes = Array(line.utf8)
        let syncNow: Bool = lock.withLock {
            _ = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            unsynced += 1
            return unsynced >= syncEvery
        }
        if syncNow { sync() }
    }
}
