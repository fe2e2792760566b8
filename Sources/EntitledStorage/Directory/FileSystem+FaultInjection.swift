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

    private static let faults = NIOLockedValueBox<[Fault]>([])

    /// Makes `fault.operation` fail with `fault.errno` for the files of `fault.directory` until removed.
    static func inject(_ fault: Fault) {
        faults.withLockedValue { $0.append(fault) }
    }

    static func remove(_ fault: Fault) {
        faults.withLockedValue { $0.removeAll { $0 == fault } }
    }

    /// The errno `operation` on `path` must fail with, if a fault says so; waits first if it says so.
    static func injectedFault(_ operation: String, path: String) -> Int32? {
        let fault = faults.withLockedValue { faults -> Fault? in
            guard !faults.isEmpty else { return nil }
            return faults.first { $0.operation == operation && (path == $0.directory || path.hasPrefix($0.directory + "/")) }
        }
        guard let fault else { return nil }
        if fault.delayMilliseconds > 0 { usleep(useconds_t(fault.delayMilliseconds * 1000)) }
        return fault.errno == 0 ? nil : fault.errno
    }
}
