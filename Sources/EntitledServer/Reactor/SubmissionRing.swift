import CEpoll
import CURing

#if canImport(Glibc)
import Glibc
#endif

/// An event loop's io_uring, used as a batch of system calls: what every connection epoll reported readable
/// sent is received in one `io_uring_enter`, and the answers of every connection a loop turn served go out
/// in one more, instead of one `read` and one `send` each.
///
/// Written by hand (over liburing) because SwiftNIO's loops use epoll only. Measured with
/// `entitled-bench checks` (C load generator, 50 connections, one request in flight each): the server made
/// one `read` and one `send` per request, and about 85% of its CPU time was in the kernel.
/// Every operation is queued with `MSG_DONTWAIT`, so it completes (or fails with `EAGAIN`) while it is
/// submitted: `submitAndWait` returns with all of their completions, and the bytes they point at need to
/// stay put only until then.
final class SubmissionRing {
    private let ring: OpaquePointer
    /// Operations queued and not yet submitted.
    private(set) var queued = 0
    /// The most operations one submission holds.
    let capacity: Int

    /// A ring for the calling thread (it alone may use it); throws the errno the kernel refused it with.
    init(entries: Int = 1024) throws(RingRefusal) {
        var error: Int32 = 0
        guard let ring = entitled_ring_create(UInt32(entries), &error) else { throw RingRefusal(errno: error) }
        self.ring = ring
        capacity = entries
    }

    deinit {
        entitled_ring_destroy(ring)
    }

    var isFull: Bool { queued >= capacity }

    /// Queues a send of `bytes` on `descriptor`, to be known by `tag`. The bytes must stay put until
    /// `submitAndWait` returns.
    func queueSend(on descriptor: Int32, _ bytes: UnsafeRawBufferPointer, tag: UInt64) {
        precondition(!isFull, "submit before queueing more")
        _ = entitled_ring_send(ring, descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), tag)
        queued += 1
    }

    /// Queues a receive of at most `bytes.count` bytes into `bytes` from `descriptor`, to be known by `tag`.
    /// The bytes must stay put until `submitAndWait` returns.
    func queueReceive(on descriptor: Int32, into bytes: UnsafeMutableRawBufferPointer, tag: UInt64) {
        precondition(!isFull, "submit before queueing more")
        _ = entitled_ring_receive(ring, descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), tag)
        queued += 1
    }

    /// Submits everything queued and returns once each has completed (they complete at once: see the type).
    func submitAndWait() {
        let count = queued
        queued = 0
        guard count > 0 else { return }
        var result: Int32
        repeat { result = entitled_ring_submit_and_wait(ring, UInt32(count)) } while result == -EINTR
    }

    /// The next completion: the tag it was queued with and its result (bytes, or `-errno`).
    func nextCompletion() -> (tag: UInt64, result: Int32)? {
        var tag: UInt64 = 0
        var result: Int32 = 0
        guard entitled_ring_next_completion(ring, &tag, &result) == 1 else { return nil }
        return (tag, result)
    }
}

/// Why a loop has no io_uring: the errno the kernel answered (`ENOSYS`: none; `EPERM`: disabled by the
/// `kernel.io_uring_disabled` sysctl or a seccomp filter, as in many containers).
struct RingRefusal: Error, CustomStringConvertible {
    let errno: Int32

    var description: String { "io_uring refused: \(String(cString: strerror(errno))) (errno \(errno))" }
}
