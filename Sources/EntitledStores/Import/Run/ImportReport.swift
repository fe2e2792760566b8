import EntitledClient
import Foundation

/// The report of an import: one JSON line per identifier (`{"key":...,"status":...,"reason":...}`), appended
/// 64 at a time as they finish (and the rest by `flush()`), and the counts of this run for its summary.
public final class ImportReport: @unchecked Sendable {
    public let path: String
    private let handle: FileHandle
    private let lock = NSLock()
    private var counts: [ImportResult.Status: Int] = [:]
    private var failures: [String: Int] = [:]
    private var notes: [String: Int] = [:]
    private var pending = Data()
    private var pendingLines = 0

    public init(path: String) throws(ImportJournal.Failure) {
        self.path = path
        let directory = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw ImportJournal.Failure(description: "cannot write the import report \(path)")
        }
        handle.seekToEndOfFile()
        self.handle = handle
    }

    deinit {
        flush()
        try? handle.synchronize()
        try? handle.close()
    }

    public func record(_ result: ImportResult) {
        var fields: [(String, JSONValue)] = [("key", .string(result.key)), ("status", .string(result.status.rawValue))]
        if let reason = result.reason { fields.append(("reason", .string(reason))) }
        if let user = result.user { fields.append(("user", .string(user))) }
        if let membership = result.membership { fields.append(("membership", .string(membership))) }
        if !result.notes.isEmpty { fields.append(("notes", .array(result.notes.map(JSONValue.string)))) }
        let line = JSONValue.object(fields).jsonText + "\n"
        lock.withLock {
            pending.append(contentsOf: line.utf8)
            pendingLines += 1
            if pendingLines >= 64 { writePending() }
            counts[result.status, default: 0] += 1
            if result.status == .failed { failures[result.failureKind, default: 0] += 1 }
            for note in result.notes { notes[note, default: 0] += 1 }
        }
    }

    /// Writes the lines not written yet.
    public func flush() {
        lock.withLock { writePending() }
    }

    /// The lock is held.
    private func writePending() {
        guard pendingLines > 0 else { return }
        // The throwing write: the old one ends the process on an error (a full disk).
        try? handle.write(contentsOf: pending)
        pending.removeAll(keepingCapacity: true)
        pendingLines = 0
    }

    public func count(_ status: ImportResult.Status) -> Int {
        lock.withLock { counts[status, default: 0] }
    }

    /// Failures by kind, most first.
    public var failuresByKind: [(kind: String, count: Int)] {
        lock.withLock { failures.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { ($0.key, $0.value) } }
    }

    /// What the sources could not give, with how many identifiers each note concerns.
    public var notesByCount: [(note: String, count: Int)] {
        lock.withLock { notes.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { ($0.key, $0.value) } }
    }
}
