/// Why the server could not start.
public enum ServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Neither TCP nor a Unix socket was configured.
    case nothingToListenOn
    /// Another process is accepting connections on this Unix socket path.
    case socketInUse(path: String)
    /// The Unix socket path names something that is not a socket (a regular file, a directory...): it is
    /// left alone, since removing it could destroy someone's data.
    case notASocket(path: String, kind: String)
    /// Binding an address failed (in use, not permitted, not an address of this machine, ...).
    case bindFailed(address: String, reason: String)
    /// The line limit is not a positive number of bytes.
    case invalidLineLimit(Int)
    /// The number of event loops is out of range.
    case invalidEventLoopCount(Int)
    /// The busy poll is negative or longer than the largest accepted.
    case invalidBusyPoll(Int)
    /// TCP on an address other machines can reach, without authentication and without the explicit
    /// `allowsUnauthenticatedRemoteClients`.
    case unauthenticatedRemoteAddress(host: String)
    /// A connection limit, the per-turn request cap or the idle timeout is out of range.
    case invalidLimit(String)
    /// The Unix socket's mode has bits beyond permissions.
    case invalidSocketMode(UInt16)
    /// `start()` was called on a server that was already started (or stopped).
    case alreadyStarted
    /// `stop()` was called while `start()` was still binding; the server did not start.
    case alreadyStopped

    /// A stable machine-readable code.
    public var code: String {
        switch self {
        case .nothingToListenOn: return "nothing_to_listen_on"
        case .socketInUse: return "socket_in_use"
        case .notASocket: return "not_a_socket"
        case .bindFailed: return "bind_failed"
        case .invalidLineLimit: return "invalid_line_limit"
        case .invalidEventLoopCount: return "invalid_event_loop_count"
        case .invalidBusyPoll: return "invalid_busy_poll"
        case .unauthenticatedRemoteAddress: return "unauthenticated_remote_address"
        case .invalidSocketMode: return "invalid_socket_mode"
        case .invalidLimit: return "invalid_limit"
        case .alreadyStarted: return "already_started"
        case .alreadyStopped: return "already_stopped"
        }
    }

    /// A sentence a person can act on.
    public var message: String {
        switch self {
        case .nothingToListenOn:
            return "nothing to listen on: TCP is off and no Unix socket path was given (use --socket PATH)"
        case .socketInUse(let path):
            return "another server is already accepting connections on the Unix socket \(path); stop it or choose another path"
        case .notASocket(let path, let kind):
            return "--socket \(path) is \(kind), not a socket; it was left alone: remove it yourself or choose another path"
        case .bindFailed(let address, let reason):
            return "cannot listen on \(address): \(reason)"
        case .invalidLineLimit(let limit):
            return "the maximum line length must be between 1 byte and \(ServerConfiguration.largestMaximumLineLength) bytes (64 MiB), not \(limit)"
        case .invalidEventLoopCount(let count):
            return "the number of event loops must be between 1 and \(ServerConfiguration.largestEventLoopCount), not \(count)"
        case .invalidBusyPoll(let microseconds):
            return "the busy poll must be between 0 and \(ServerConfiguration.largestBusyPollMicroseconds) microseconds, not \(microseconds)"
        case .unauthenticatedRemoteAddress(let host):
            return "refusing to listen on \(host) without authentication: other machines could change every entitlement; give --auth FILE, listen on 127.0.0.1, or say --insecure-no-auth"
        case .invalidLimit(let values):
            return "a limit is out of range: \(values)"
        case .invalidSocketMode(let mode):
            return "the Unix socket mode must be permission bits such as 600 (octal), not \(String(mode, radix: 8))"
        case .alreadyStarted:
            return "this server was already started; a server starts once (create a new one to serve again)"
        case .alreadyStopped:
            return "the server was stopped while it was starting, so it did not start"
        }
    }

    public var description: String { message }
}
