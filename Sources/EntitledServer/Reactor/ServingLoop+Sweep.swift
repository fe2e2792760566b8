import Logging

/// The sweep: connections idle too long, or unauthenticated too long, are closed.
extension ServingLoop {
    /// Closes, about once a second, the connections idle for longer than the idle timeout: no byte from
    /// the client, nothing in flight, no watch. Closed without a line: a line that answers no request
    /// would be taken by a pooled client for the answer to its next one.
    /// Also closes, under authentication, the connections that have not authenticated within the
    /// authentication timeout of being accepted (whether or not they send anything): places held by
    /// clients that never authenticate free up within that time.
    func closeIdleConnectionsIfDue() {
        let timeouts: [UInt64] = [idleTimeoutMilliseconds, authenticationTimeoutMilliseconds].filter { $0 > 0 }
        let shortest: UInt64 = timeouts.min() ?? 1000
        deadlines.add(.sweepConnections, at: turnStarted + Swift.min(1000, Swift.max(10, shortest / 4)))
        var closed = 0
        var unauthenticated = 0
        for case let connection? in connections {
            if authenticationTimeoutMilliseconds > 0, !connection.hasAuthenticated,
                turnStarted &- connection.acceptedAt >= authenticationTimeoutMilliseconds
            {
                connection.close()
                unauthenticated += 1
            } else if idleTimeoutMilliseconds > 0, turnStarted &- connection.lastActivity >= idleTimeoutMilliseconds, connection.isIdle {
                connection.close()
                closed += 1
            }
        }
        if closed > 0 {
            statistics.record(.closedIdle, count: UInt64(closed))
            logger.info("closed idle connections", metadata: ["count": "\(closed)", "idleTimeoutMs": "\(idleTimeoutMilliseconds)"])
        }
        if unauthenticated > 0 {
            statistics.record(.closedIdle, count: UInt64(unauthenticated))
            logger.info(
                "closed connections that did not authenticate in time",
                metadata: ["count": "\(unauthenticated)", "authTimeoutMs": "\(authenticationTimeoutMilliseconds)"]
            )
        }
    }
}
