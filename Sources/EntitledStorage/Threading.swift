#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Threads, a mutex and a condition variable on POSIX primitives, in place of Foundation's `Thread`,
// `NSLock` and `NSCondition`. Full Foundation on Linux drags in libFoundation.so, lib_FoundationICU.so
// and libFoundationInternationalization.so, and valgrind (3.19) crashes reading lib_FoundationICU.so's
// debug information, which rules out `valgrind --tool=callgrind` on the server. These are the few
// pieces of Foundation the storage and the executable used; they are thin wrappers over pthreads, as
// Foundation's own are on Linux. (Plain locks use `NIOLock`; `PthreadMutex` exists for `tryLock`.)

/// Starts detached threads, as `Thread.detachNewThread` did.
package enum DetachedThread {
    /// Runs `body` on a new detached thread (nobody joins it; it ends when `body` returns), named
    /// `name` for `top -H`, `gdb` and `/proc`. Linux keeps the first 15 bytes of a thread's name.
    ///
    /// Traps when the thread cannot be created (the process is out of threads or memory): the callers
    /// (the log's writer, a snapshot) have no other way to do their work.
    package static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(ThreadBody(name: name, body: body))
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        // Detached from the start, like Foundation's threads: the system reclaims it when it ends.
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        #if canImport(Darwin)
        var thread: pthread_t? = nil
        #elseif canImport(Musl)
        var thread: pthread_t = nil
        #else
        var thread = pthread_t()
        #endif
        let created = pthread_create(&thread, &attributes, { raw in
            // (The cast makes the same closure fit Linux's optional and Darwin's non-optional argument.)
            let threadBody = Unmanaged<ThreadBody>.fromOpaque((raw as UnsafeMutableRawPointer?)!).takeRetainedValue()
            // (A free function: naming a static member here, implicitly through `Self`, crashes the
            // Swift 6.3 compiler's region-based isolation checking.)
            nameCurrentThread(threadBody.name)
            threadBody.body()
            return nil
        }, box.toOpaque())
        guard created == 0 else {
            box.release()
            preconditionFailure("cannot start the thread \(name): error \(created)")
        }
    }
}

/// What the new thread runs, handed to it through `pthread_create`'s context pointer.
private final class ThreadBody: Sendable {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}

/// Names the calling thread. Best effort: a name is only a label.
package func nameCurrentThread(_ name: String) {
    #if canImport(Darwin)
    _ = pthread_setname_np(name)
    #else
    // Glibc's `pthread_setname_np` is not visible to Swift (it needs _GNU_SOURCE) and `prctl` is
    // variadic, so write the name where the kernel keeps it (proc(5)), which holds 15 bytes.
    // (Without a name a thread shows its creator's, e.g. a Swift concurrency worker's.)
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
    #endif
}

/// A pthread mutex that can also be tried: `NIOLock` has no `tryLock`, and `LogWriter.commitIfIdle`
/// must not wait for a write in progress (what `NSLock.try()` gave it).
final class PthreadMutex: @unchecked Sendable {
    // @unchecked: the mutex is the synchronization; its storage never moves (allocated once, here).
    fileprivate let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() {
        // A default (non-recursive, non-error-checking) mutex, like NSLock's on Linux.
        mutex.initialize(to: pthread_mutex_t())
        let error = pthread_mutex_init(mutex, nil)
        precondition(error == 0, "pthread_mutex_init failed: error \(error)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() {
        let error = pthread_mutex_lock(mutex)
        precondition(error == 0, "pthread_mutex_lock failed: error \(error)")
    }

    /// Takes the mutex if nobody holds it; returns whether it did. Never waits.
    func tryLock() -> Bool {
        let error = pthread_mutex_trylock(mutex)
        precondition(error == 0 || error == EBUSY, "pthread_mutex_trylock failed: error \(error)")
        return error == 0
    }

    func unlock() {
        let error = pthread_mutex_unlock(mutex)
        precondition(error == 0, "pthread_mutex_unlock failed: error \(error)")
    }
}

/// A mutex with one condition variable, used as `NSCondition` was: `lock`, then `wait` in a loop on
/// the caller's own predicate; `signal` or `broadcast` while holding the lock.
///
/// Timed waits measure the monotonic clock on Linux (`NSCondition.wait(until:)` took a wall-clock
/// `Date`), so setting the system clock back cannot stretch a 5 ms wait into hours.
final class PthreadCondition: @unchecked Sendable {
    // @unchecked: the mutex is the synchronization; the storage never moves (allocated once, here).
    private let mutex = PthreadMutex()
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        condition.initialize(to: pthread_cond_t())
        #if canImport(Darwin)
        let error = pthread_cond_init(condition, nil)
        #else
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        defer { pthread_condattr_destroy(&attributes) }
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        let error = pthread_cond_init(condition, &attributes)
        #endif
        precondition(error == 0, "pthread_cond_init failed: error \(error)")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
    }

    func lock() { mutex.lock() }

    func unlock() { mutex.unlock() }

    /// Releases the lock, waits for a `signal` or `broadcast` (or a spurious wake-up: check the
    /// predicate again), and takes the lock back. Call it holding the lock.
    func wait() {
        let error = pthread_cond_wait(condition, mutex.mutex)
        precondition(error == 0, "pthread_cond_wait failed: error \(error)")
    }

    /// Like `wait()`, but returns after about `timeout` at the latest. Returns `false` when the time
    /// ran out, `true` when woken (perhaps spuriously).
    @discardableResult
    func wait(timeout: Duration) -> Bool {
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = attoseconds / 1_000_000_000
        #if canImport(Darwin)
        var relative = timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
        let error = pthread_cond_timedwait_relative_np(condition, mutex.mutex, &relative)
        #else
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        deadline.tv_sec += Int(seconds)
        deadline.tv_nsec += Int(nanoseconds)
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        let error = pthread_cond_timedwait(condition, mutex.mutex, &deadline)
        #endif
        precondition(error == 0 || error == ETIMEDOUT, "pthread_cond_timedwait failed: error \(error)")
        return error == 0
    }

    /// Wakes one waiting thread. (LogWriter calls it holding the lock, as it did `NSCondition`'s.)
    func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every waiting thread.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }
}

/// A value handed to threads that the compiler cannot prove safe to share, and that is by how it is used:
/// bytes the threads only read, or results of which each thread writes only its own element
/// (`SnapshotFile.readMemberships`, `LoggedChanges.decode`).
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

