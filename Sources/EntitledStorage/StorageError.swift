/// Why the data directory could not be opened, read or written.
public enum StorageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Another process holds the data directory's lock.
    case locked(directory: String, holder: String)
    /// A system call on a file failed.
    case io(operation: String, path: String, errno: Int32)
    /// A log file fails its checks somewhere other than a torn last record.
    case corruptLog(file: String, offset: Int, problem: String)
    /// A snapshot file fails its checks.
    case corruptSnapshot(file: String, offset: Int, problem: String)
    /// The files on disk do not form one unbroken history (a log file is missing).
    case brokenHistory(String)
    /// An operator tool was pointed at a file that is not a log segment of the data directory.
    case notALogSegment(file: String, directory: String)
    /// The log takes no writes (its disk is full or failed): a snapshot is not written meanwhile.
    case writesUnavailable(String)
    /// A name the data directory uses (a log segment, a snapshot, `LOCK`) is something other than a regular
    /// file: a FIFO, a device, a directory, a socket or a symbolic link. It is never opened for reading (a
    /// FIFO would block the reader for ever, a device could be endless) nor followed (a link could make a
    /// repair truncate a file outside the directory). `kind` says what it is, as "a FIFO".
    case notARegularFile(path: String, kind: String)
    /// A start was asked to stop (SIGTERM or SIGINT) while it loaded the data directory: it stopped before
    /// serving, leaving the files as a crash at that moment would (the next start loads them again).
    case loadingStopped

    /// A stable machine-readable code.
    public var code: String {
        switch self {
        case .locked: return "data_directory_locked"
        case .io: return "io_error"
        case .corruptLog: return "corrupt_log"
        case .corruptSnapshot: return "corrupt_snapshot"
        case .brokenHistory: return "broken_history"
        case .notALogSegment: return "not_a_log_segment"
        case .writesUnavailable: return "writes_unavailable"
        case .notARegularFile: return "not_a_regular_file"
        case .loadingStopped: return "loading_stopped"
        }
    }

    /// A sentence a person can act on.
    public var message: String {
        switch self {
        case .locked(let directory, let holder):
            return "the data directory \(directory) is in use by another entitled (\(holder)); stop it, or give this one its own --data-dir"
        case .io(let operation, let path, let errno):
            return "\(operation) \(path) failed: \(Self.describe(errno: errno))"
        case .corruptLog(let file, let offset, let problem):
            return "the log file \(file) is corrupt at byte offset \(offset): \(problem). Nothing was dropped; see \"When the data directory is damaged\" in Protocol/OPERATIONS.md (entitled-datadir verify / cut-log)"
        case .corruptSnapshot(let file, let offset, let problem):
            return "the snapshot \(file) is corrupt at byte offset \(offset): \(problem). Nothing was dropped; see \"When the data directory is damaged\" in Protocol/OPERATIONS.md"
        case .brokenHistory(let problem):
            return "the data directory does not hold one unbroken history: \(problem)"
        case .notALogSegment(let file, let directory):
            return "\(file) is not a log segment (log-<20-digit first sequence>.wal) of the data directory \(directory)"
        case .writesUnavailable(let reason):
            return "no snapshot while the log takes no writes: \(reason)"
        case .notARegularFile(let path, let kind):
            return "\(path) is \(kind), not a regular file: a data directory holds only the regular files its server wrote; move it out of the directory"
        case .loadingStopped:
            return "stopped while loading the data directory (SIGTERM or SIGINT); nothing was served, and the next start loads it again"
        }
    }

    public var description: String { message }

    static func describe(errno: Int32) -> String {
        String(cString: strerror(errno)) + " (errno \(errno))"
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
