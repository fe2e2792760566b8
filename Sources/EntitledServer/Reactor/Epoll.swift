import CEpoll

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One epoll instance: the set of file descriptors an event loop waits on, level-triggered.
///
/// Level-triggered on purpose: a connection is read once per wakeup (one `read` of at most
/// `ServedConnection.readSize` bytes), and epoll reports it again while bytes remain, so one busy client
/// gets one read per loop turn like every other client.
struct Epoll: ~Copyable {
    let descriptor: Int32

    /// What a file descriptor is watched for.
    struct Interest: OptionSet {
        let rawValue: UInt32
        static let readable = Interest(rawValue: EPOLLIN.rawValue | EPOLLRDHUP.rawValue)
        static let writable = Interest(rawValue: EPOLLOUT.rawValue)
    }

    init() throws(SocketError) {
        descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard descriptor >= 0 else { throw SocketError(operation: "epoll_create1") }
    }

    deinit {
        close(descriptor)
    }

    func add(_ fd: Int32, _ interest: Interest) throws(SocketError) {
        var event = cepoll_event(interest.rawValue, fd)
        guard epoll_ctl(descriptor, EPOLL_CTL_ADD, fd, &event) == 0 else { throw SocketError(operation: "epoll_ctl add") }
    }

    /// Changes what `fd` is watched for. Failing here means the descriptor is gone; callers close it.
    func modify(_ fd: Int32, _ interest: Interest) -> Bool {
        var event = cepoll_event(interest.rawValue, fd)
        return epoll_ctl(descriptor, EPOLL_CTL_MOD, fd, &event) == 0
    }

    func remove(_ fd: Int32) {
        var event = cepoll_event(0, fd)
        _ = epoll_ctl(descriptor, EPOLL_CTL_DEL, fd, &event)
    }

    /// Waits up to `milliseconds` (-1: forever) and fills `events`; returns how many are ready (0 on a
    /// timeout or an interrupted wait).
    func wait(into events: UnsafeMutableBufferPointer<epoll_event>, milliseconds: Int32) -> Int {
        let ready = epoll_wait(descriptor, events.baseAddress, Int32(events.count), milliseconds)
        return ready < 0 ? 0 : Int(ready)
    }

    /// As `wait(into:milliseconds:)`, for at most `nanoseconds`.
    func wait(into events: UnsafeMutableBufferPointer<epoll_event>, nanoseconds: UInt64) -> Int {
        let ready = cepoll_wait_nanoseconds(descriptor, events.baseAddress, Int32(events.count), Int64(min(nanoseconds, UInt64(Int64.max))))
        return ready < 0 ? 0 : Int(ready)
    }
}

/// A system call failed: which one, and why (`errno`'s message unless told).
struct SocketError: Error, CustomStringConvertible {
    let operation: String
    let message: String

    init(operation: String, code: Int32 = errno) {
        self.operation = operation
        self.message = String(cString: strerror(code))
    }

    init(operation: String, message: String) {
        self.operation = operation
        self.message = message
    }

    var description: String { "\(operation): \(message)" }
}
