import EntitledStorage
import Logging

/// What every connection of a server shares: how to answer, the limits, where to log.
struct ConnectionContext: Sendable {
    let processor: RequestProcessor
    let maximumLineLength: Int
    /// The most requests of one connection answered in one loop turn.
    let maximumRequestsPerTurn: Int
    /// The most milliseconds a read with `minSeq` waits for its change (`--min-seq-wait`).
    let minimumSequenceWaitMilliseconds: UInt64
    /// Set when reads wait for the log to acknowledge the changes they may have seen
    /// (`ServerConfiguration.unsyncedReads` `.hold`, on a server with a data directory).
    let heldReads: LogProgress?
    /// Whether the loops send through io_uring (`ServerConfiguration.usesIoUring`).
    let usesIoUring: Bool
    /// The certificate for TLS on TCP connections; `nil` serves plain TCP.
    let tls: ServerTLS?
    /// The tokens clients authenticate with; `nil` when the server requires no authentication.
    let accessTokens: AccessTokenSource?
    /// Failed `auth` requests per client address, shared by every loop.
    let authenticationThrottle = AuthenticationThrottle()
    /// Re-reads the auth file (the `reload` operation): the server's `reloadAccessTokens()`.
    let reloadAccessTokens: @Sendable () -> Result<Int, TokenReloadError>
    /// Every loop's counters, which `stats` reads.
    let statistics: ServerCounters
    let logger: Logger
    /// Called on a connection's loop when it closes, so the server stops counting it.
    let onClose: @Sendable (ConnectionKind) -> Void
}

/// Which kind of listener accepted a connection.
/// How many connections are open, by kind: each kind has its own limit.
struct OpenConnections: Sendable {
    var tcp = 0
    var unix = 0
    var total: Int { tcp + unix }

    subscript(kind: ConnectionKind) -> Int {
        get { kind == .tcp ? tcp : unix }
        set { if kind == .tcp { tcp = newValue } else { unix = newValue } }
    }
}

enum ConnectionKind: Sendable {
    case tcp
    case unix
}
