#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A readers-writer lock over `pthread_rwlock_t`.
///
/// Written by hand because the libraries we build on offer only mutual exclusion (`NIOLock`, the
/// standard library's `Mutex`): checks from every event loop must read the store at the same time, and
/// only the rare writes need it alone. On glibc the lock prefers writers, so a steady stream of checks
/// cannot starve a grant.
final class ReadWriteLock: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        #if canImport(Glibc)
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        let status = pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
        #else
        let status = pthread_rwlock_init(lock, nil)
        #endif
        precondition(status == 0, "pthread_rwlock_init failed: \(status)")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` while holding the lock shared with other readers.
    @inline(__always)
    func withReadLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let status = pthread_rwlock_rdlock(lock)
        precondition(status == 0, "pthread_rwlock_rdlock failed: \(status)")
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    /// Runs `body` while holding the lock alone.
    @inline(__always)
    func withWriteLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let status = pthread_rwlock_wrlock(lock)
        precondition(status == 0, "pthread_rwlock_wrlock failed: \(status)")
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
