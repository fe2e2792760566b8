#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import EntitledCore

/// Why the log takes no changes right now, since when, and whether that ends by itself.
///
/// Two kinds, because they call for opposite treatment. A full disk (`ENOSPC`, `EDQUOT` from a write)
/// refused bytes that were never written: nothing on disk is in doubt, so the log cuts itself back to
/// the acknowledged records and tries again with a backoff, as Redis does after a failed AOF write. Any
/// other failure, and above all a failed `fdatasync`, leaves the file's state unknown: Linux may have
/// dropped the dirty pages and cleared the error, so a later sync that succeeds proves nothing (the
/// 2018 "fsyncgate" that made PostgreSQL panic on any fsync failure). The log then takes no more
/// changes until a restart, which recovers from what really is on disk.
public struct LogOutage: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// The disk refused space; writes resume once it takes them again.
        case diskFull = "disk_full"
        /// A write or sync failed otherwise; writes resume only after a restart.
        case diskFailed = "disk_failed"
    }

    public var kind: Kind
    /// The failed call, its file and the system's error, e.g. `write log-….wal: No space left on device (errno 28)`.
    public var cause: String
    /// The symbolic name of the error, e.g. `ENOSPC`, when it has one.
    public var errorName: String?
    /// When the failure happened (the server's clock).
    public var since: Timestamp
    /// Attempts to write again so far (a full disk only).
    public var retries: Int

    /// Whether writes resume by themselves (a full disk) or only after a restart.
    public var resumesByItself: Bool { kind == .diskFull }

    /// The sentence clients get with `unavailable`, and operators in `stats` and the log.
    public var reason: String {
        let name = errorName.map { "\($0): " } ?? ""
        switch kind {
        case .diskFull:
            return "the data directory's disk is full (\(name)\(cause)); writes resume by themselves once it takes writes again"
        case .diskFailed:
            return "the data directory's disk failed (\(name)\(cause)); writes stay refused until entitled is restarted, which recovers from what is on disk"
        }
    }

    /// Classifies a failure of the log's I/O.
    init(_ error: StorageError, since: Timestamp) {
        self.since = since
        retries = 0
        guard case .io(let operation, let path, let number) = error else {
            kind = .diskFailed
            errorName = nil
            cause = error.message
            return
        }
        // The file's name, not its path: the message goes to clients.
        let file = path.split(separator: "/").last.map(String.init) ?? path
        cause = "\(operation) \(file): \(StorageError.describe(errno: number))"
        errorName = Self.name(of: number)
        // Only a write or a create that ran out of space is known to have left nothing half-done; a sync
        // that fails, whatever its errno, may have lost pages.
        let refusedSpace = number == ENOSPC || number == EDQUOT
        kind = refusedSpace && (operation == "write" || operation == "create") ? .diskFull : .diskFailed
    }

    static func name(of number: Int32) -> String? {
        switch number {
        case ENOSPC: return "ENOSPC"
        case EDQUOT: return "EDQUOT"
        case EIO: return "EIO"
        case EROFS: return "EROFS"
        case EBADF: return "EBADF"
        case EFBIG: return "EFBIG"
        default: return nil
        }
    }
}
