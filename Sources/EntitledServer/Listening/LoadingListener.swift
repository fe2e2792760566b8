import CEpoll
import EntitledCore
import EntitledStorage
import EntitledWire
import Logging
import NIOConcurrencyHelpers
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// While a starting server loads its store, accepts connections on the server's addresses and answers
/// every request line with the error `loading` and how far loading has come, so that clients and load
/// balancers can tell a starting server from one that is down (a refused connection).
///
/// One thread and `poll`: a start lasts seconds to minutes, and the answers are one line each. It keeps
/// the server's limits: at most `maximumConnections` connections (beyond, a connection is closed as soon
/// as it is accepted), lines of at most `maximumLineLength` bytes (a longer one is answered `too_large` and
/// its connection closed), a connection idle for `idleTimeoutSeconds` is closed, and so is one that does
/// not read its answers (more than 64 KiB of them waiting). With TLS on TCP, a TCP connection is closed
/// at once: a TLS client cannot read a plain line, and fails fast instead of waiting for its handshake.
///
/// `finish()` closes every connection it accepted (clients reconnect) and hands the listening sockets to
/// `EntitledServer` (`ServerConfiguration.boundListeners`), which serves on them: no moment of refused
/// connections between the two, and a port 0 stays the port it picked.
public final class LoadingListener: Sendable {
    private let listeners: BoundListeners
    private let progress: LoadingProgress
    private let limits: Limits
    private let logger: Logger
    /// Written by `finish()` to wake the thread; the thread reads the other end.
    private let wake: (read: Int32, write: Int32)
    /// 1 once the thread has closed its connections and ended.
    private let threadState = ConditionLock(value: 0)

    private struct Limits: Sendable {
        let maximumConnections: Int
        let maximumLineLength: Int
        let idleNanoseconds: UInt64
        let closesTCP: Bool
        static let maximumUnsentBytes = 64 * 1024
    }

    /// Binds the addresses `configuration` names, as `EntitledServer.start` would, and answers on them
    /// until `finish()`.
    public static func start(
        configuration: ServerConfiguration, progress: LoadingProgress, logger: Logger
    ) throws(ServerError) -> LoadingListener {
        let listeners = try BoundListeners.bind(configuration)
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            listeners.release()
            throw ServerError.bindFailed(address: "the loading listener's wake pipe", reason: String(cString: strerror(errno)))
        }
        for end in pipeEnds {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        let listener = LoadingListener(
            listeners: listeners, progress: progress,
            limits: Limits(
                maximumConnections: max(1, min(configuration.maximumConnections, 4096)),
                maximumLineLength: configuration.maximumLineLength,
                idleNanoseconds: configuration.idleTimeoutSeconds > 0 ? UInt64(configuration.idleTimeoutSeconds * 1e9) : .max,
                closesTCP: configuration.tls != nil
            ),
            logger: logger, wake: (pipeEnds[0], pipeEnds[1])
        )
        DetachedThread.start(name: "entitled-loading") { listener.serve() }
        return listener
    }

    private init(listeners: BoundListeners, progress: LoadingProgress, limits: Limits, logger: Logger, wake: (read: Int32, write: Int32)) {
        self.listeners = listeners
        self.progress = progress
        self.limits = limits
        self.logger = logger
        self.wake = wake
    }

    /// The addresses it answers on (port 0 resolved).
    public var addresses: [SocketAddress] { listeners.sockets.map(\.address) }

    /// Stops answering: closes every connection it accepted and returns the listening sockets, for
    /// `ServerConfiguration.boundListeners`. Waits for its thread to end.
    public func finish() -> BoundListeners {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        threadState.lock(whenValue: 1)
        threadState.unlock()
        Glibc.close(wake.read)
        Glibc.close(wake.write)
        return listeners
    }

    // MARK: The thread

    /// A connection accepted while loading.
    private struct Connection {
        let descriptor: Int32
        var input: [UInt8] = []
        var output: [UInt8] = []
        var lastActive: UInt64
    }

    private func serve() {
        var connections: [Connection] = []
        serving: while true {
            var polled = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            polled += listeners.sockets.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            polled += connections.map { pollfd(fd: $0.descriptor, events: Int16($0.output.isEmpty ? POLLIN : POLLIN | POLLOUT), revents: 0) }
            // Wakes at least once a second, for the idle timeout.
            let ready = poll(&polled, nfds_t(polled.count), 1000)
            if ready < 0, errno != EINTR { break serving }
            if polled[0].revents != 0 { break serving }
            let now = Self.monotonicNanoseconds()
            for (index, listener) in listeners.sockets.enumerated() where polled[1 + index].revents != 0 {
                acceptAll(on: listener, into: &connections, now: now)
            }
            let first = 1 + listeners.sockets.count
            var open: [Connection] = []
            for (index, var connection) in connections.enumerated() {
                let events = index + first < polled.count ? polled[index + first].revents : 0
                if step(&connection, events: events, now: now) {
                    open.append(connection)
                } else {
                    Glibc.close(connection.descriptor)
                }
            }
            connections = open
        }
        // A last pass: lines that came since the last poll are answered too (and what is waiting is sent
        // as far as the socket takes it), so that a request sent just before the server became ready is
        // answered `loading`, not met by a closed connection.
        let now = Self.monotonicNanoseconds()
        for var connection in connections {
            _ = step(&connection, events: Int16(POLLIN), now: now)
            Glibc.close(connection.descriptor)
        }
        threadState.lock()
        threadState.unlock(withValue: 1)
    }

    private func acceptAll(on listener: ListeningSocket, into connections: inout [Connection], now: UInt64) {
        while true {
            let descriptor = cepoll_accept(listener.descriptor)
            guard descriptor >= 0 else {
                // Out of descriptors or memory: the listener stays readable; a pause keeps the thread from
                // spinning on it. (EAGAIN: none left.)
                if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM { usleep(10_000) }
                return
            }
            if connections.count >= limits.maximumConnections || (limits.closesTCP && listener.kind == .tcp) {
                Glibc.close(descriptor)
                continue
            }
            connections.append(Connection(descriptor: descriptor, lastActive: now))
        }
    }

    /// Reads what `connection` sent, answers its complete lines and sends what it can; `false` when the
    /// connection is to be closed.
    private func step(_ connection: inout Connection, events: Int16, now: UInt64) -> Bool {
        if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(connection.descriptor, &chunk, chunk.count)
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) { return false }
            if count > 0 {
                connection.lastActive = now
                connection.input += chunk[..<count]
                guard answerLines(of: &connection) else { return false }
            }
        }
        if !connection.output.isEmpty {
            let sent = send(connection.descriptor, connection.output, connection.output.count, Int32(MSG_NOSIGNAL))
            if sent < 0, errno != EAGAIN, errno != EINTR { return false }
            if sent > 0 { connection.output.removeFirst(sent) }
            if connection.output.count > Limits.maximumUnsentBytes { return false }
        }
        return now &- connection.lastActive < limits.idleNanoseconds
    }

    /// Answers every complete line of `connection`'s input; `false` after a line over the limit (answered
    /// `too_large`, as the server does, and the connection is closed once it is sent).
    private func answerLines(of connection: inout Connection) -> Bool {
        var buffer = ByteBuffer()
        while let newline = connection.input.firstIndex(of: UInt8(ascii: "\n")) {
            let line = ByteBuffer(bytes: connection.input[..<newline])
            connection.input.removeSubrange(...newline)
            guard line.readableBytes <= limits.maximumLineLength + 1 else { return refuseLongLine(&connection) }
            ResponseEncoder.writeLoading(loaded: progress.loaded, total: progress.total, id: RequestDecoder.decode(line: line).id, into: &buffer)
        }
        if connection.input.count > limits.maximumLineLength + 1 { return refuseLongLine(&connection) }
        connection.output += buffer.readableBytesView
        return true
    }

    private func refuseLongLine(_ connection: inout Connection) -> Bool {
        var buffer = ByteBuffer()
        ResponseEncoder.write(WireError(.tooLarge, "the line is longer than the limit of \(limits.maximumLineLength) bytes; the connection will be closed"), id: nil, into: &buffer)
        _ = buffer.readableBytesView.withUnsafeBytes { send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return false
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
