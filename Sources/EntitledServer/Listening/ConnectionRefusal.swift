import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Turns away connections beyond the server's limit: one `busy` line, then close. Used on the accepting
/// loop's thread only.
final class ConnectionRefusal {
    let limit: Int
    private let logger: Logger
    private let line: [UInt8]
    /// Refusals not yet logged, and when the last log line was written: a flood of refused connections
    /// makes one warning a second, not one per connection.
    private var unreported = 0
    private var lastReport: UInt64 = 0

    /// Whether TCP connections speak TLS: a TLS client would read the plain `busy` line as a protocol
    /// error, so they are closed without it.
    private let tcpIsTLS: Bool

    init(limit: Int, tcpIsTLS: Bool, logger: Logger) {
        self.limit = limit
        self.tcpIsTLS = tcpIsTLS
        self.logger = logger
        line = Array(
            #"{"ok":false,"error":{"code":"busy","message":"the server is at its limit of \#(limit) connections; retry later"}}"#.utf8
        ) + [UInt8(ascii: "\n")]
    }

    /// Sends the `busy` line if the socket takes it at once (a new socket's buffer always does), and
    /// closes the connection.
    func refuse(_ descriptor: Int32, kind: ConnectionKind) {
        if kind == .unix || !tcpIsTLS {
            _ = line.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        }
        // Closing a socket with unread input resets it, and a reset can discard the line just sent:
        // read what the client already sent first (it may still lose the line if more arrives meanwhile).
        shutdown(descriptor, Int32(SHUT_WR))
        // At most 64 KiB: a client streaming data must not hold the accepting loop.
        var scratch = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<16 where scratch.withUnsafeMutableBytes({ recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
        close(descriptor)
        unreported += 1
        let now = monotonicMilliseconds()
        if now &- lastReport >= 1000 {
            logger.warning(
                "refused connections: at the connection limit",
                metadata: ["limit": "\(limit)", "refused": "\(unreported)"]
            )
            unreported = 0
            lastReport = now
        }
    }
}
