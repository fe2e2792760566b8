import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Failures that tests make the file system report, for what a real disk rarely does on demand: an `EIO`
/// from `fdatasync`. Each fault names the call and the directory whose files it hits, so tests that run
/// at the same time in other directories are not touched. Empty in a server: one uncontended lock per
/// write or sync, against the microseconds of the system call itself.
extension FileSystem {
    struct Fault: Sendable, Hashable {
        /// The call that fails: "write", "fdatasync", "create" or "fsync" (of a directory).
        var operation: String
        /// The directory whose files (and which itself) it hits.
        var directory: String
        /// What the call fails with; 0 lets it go on (after the delay).
        var errno: Int32
        /// How long the call takes first (milliseconds), as a slow disk's would.
        var delayMilliseconds: Int = 0
    }

    private static let faults = NIOLockedValueBox<(active: [Fault], hits: [Fault: Int])>(([], [:]))

    /// Makes `fault.operation` fail with `fault.errno` for the files of `fault.directory` until removed.
    static func inject(_ fault: Fault) {
        faults.withLockedValue { $0.active.append(fault) }
    }

    static func remove(_ fault: Fault) {
        faults.withLockedValue {
            $0.active.removeAll { $0 == fault }
            $0.hits[fault] = nil
        }
    }

    /// How many calls `fault` has hit since it was injected, counted as each call starts (before its
    /// delay): a test waits for the first to know that the server has reached the call, instead of
    /// guessing how long that takes on a loaded machine.
    static func hits(of fault: Fault) -> Int {
        faults.withLockedValue { $0.hits[fault] ?? 0 }
    }

    /// The errno `operation` on `path` must fail with, if a fault says so; waits first if it says so.
    static func injectedFault(_ operation: String, path: String) -> Int32? {
        let fault = faults.withLockedValue { faults -> Fault? in
            guard !faults.active.isEmpty else { return nil }
            let hit = faults.active.first {
                $0.operation == operation && (path == $0.directory || path.hasPrefix($0.directory + "/"))
            }
            if let hit { faults.hits[hit, default: 0] += 1 }
            return hit
        }
        guard let fault else { return nil }
        if fault.delayMilliseconds > 0 { usleep(useconds_t(fault.delayMilliseconds * 1000)) }
        return fault.errno == 0 ? nil : fault.errno
    }
}
