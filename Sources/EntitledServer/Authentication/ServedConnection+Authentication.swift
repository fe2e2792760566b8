import EntitledWire
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension ServedConnection {
    /// Refused `auth` requests after which a connection is closed: enough for a client to retry a typo,
    /// too few to guess a token on one connection. They are counted for the connection's life, successes
    /// in between included (else a `check` token could interleave guesses at an `admin` one without end).
    /// Guessing across connections is bounded by the connection limit and by the tokens' length
    /// (`AccessTokens.minimumTokenBytes`).
    static let maximumFailedAuthentications = 3

    /// Answers `auth`: a known token gives the connection its role; an unknown one takes away any role it
    /// had (`anonymous`), and the third in a row closes it. Neither the answer nor the log shows the token.
    /// Returns the code of the error it was answered with, if any.
    @discardableResult
    func authenticate(token: String, id: ByteBuffer?) -> ErrorCode? {
        guard let tokens = context.accessTokens else {
            // No authentication configured: every client is `local`, with every operation.
            appendAnswer { ResponseEncoder.write(.authenticated(name: access.actor, role: AccessRole.admin.rawValue, authRequired: false), id: id, into: &$0) }
            return nil
        }
        // An address that failed too often is refused before its token is looked at, so that guessing from
        // it gains nothing. Except on this machine: its processes share 127.0.0.1, and one of them failing
        // must not lock the others out (a receiver's pooled connection, reconnecting), so from loopback a
        // known token is still accepted (tokens are too long to be guessed by count: `minimumTokenBytes`).
        // The Unix socket's clients are this machine's users, who could read the auth file's directory
        // anyway: not throttled.
        let address = kind == .tcp ? peerAddress : nil
        let now = loop.turnStarted
        if let address, let wait = context.authenticationThrottle.refusal(for: address, now: now),
            !AuthenticationThrottle.isLoopback(address) || tokens.current.authenticate(token) == nil
        {
            failedAuthentications += 1
            let message = "too many failed attempts from this address; retry in \((wait + 999) / 1000) s"
            appendAnswer { ResponseEncoder.write(WireError(.unauthorized, message), id: id, into: &$0) }
            closeAfterAnswers()
            return .unauthorized
        }
        if let entry = tokens.current.authenticate(token) {
            access = .authenticated(as: entry)
            authenticatedToken = entry
            hasAuthenticated = true
            // An admin's watch of every subject does not outlive a switch to a check token.
            dropWatchesBeyondAccess()
            appendAnswer { ResponseEncoder.write(.authenticated(name: entry.name, role: entry.role.rawValue, authRequired: true), id: id, into: &$0) }
            return nil
        }
        access = .anonymous
        authenticatedToken = nil
        // What it watched, it may no longer see.
        dropAllWatches()
        failedAuthentications += 1
        let closing = failedAuthentications >= Self.maximumFailedAuthentications
        // One line at the first failure of an interval, then one with the count: not a line a guess.
        if let summary = context.authenticationThrottle.recordFailure(of: address ?? "unix", now: now) {
            context.logger.warning(
                "authentication failed: unknown token",
                metadata: [
                    "peer": "\(peerDescription)", "attempt": "\(failedAuthentications)", "closing": "\(closing)",
                    "failuresSinceLastLine": "\(summary.count)", "addresses": "\(summary.addresses)",
                ]
            )
        }
        let message =
            closing
            ? "unknown token; \(Self.maximumFailedAuthentications) failed attempts, the connection will be closed"
            : "unknown token; this connection may now run only ping, hello and auth, and its watches ended"
        appendAnswer { ResponseEncoder.write(WireError(.unauthorized, message), id: id, into: &$0) }
        if closing { closeAfterAnswers() }
        return .unauthorized
    }

    /// Applies reloaded tokens to a connection already authenticated: the entry with its token gives it its
    /// (possibly changed) role and name; when its token is gone, it goes back to `anonymous` and its watches
    /// end, as after a refused `auth`. Returns whether it lost its role. Runs on the connection's loop.
    func reauthorize(with tokens: AccessTokens) -> Bool {
        guard let held = authenticatedToken else { return false }
        if let entry = tokens.entry(withSecretOf: held) {
            authenticatedToken = entry
            access = .authenticated(as: entry)
            dropWatchesBeyondAccess()
            return false
        }
        authenticatedToken = nil
        access = .anonymous
        dropAllWatches()
        return true
    }

    /// The client's IP address (without its port), for the throttle of failed `auth`; `nil` if unknown.
    var peerAddress: String? {
        let description = peerDescription
        guard description != "unknown", let colon = description.lastIndex(of: ":") else { return nil }
        return String(description[..<colon])
    }

    /// The client's address for log lines: `IP:port` over TCP, `unix` over the Unix socket.
    var peerDescription: String {
        guard kind == .tcp else { return "unix" }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) == 0 }
        }
        guard found else { return "unknown" }
        let address: SocketAddress
        switch Int32(storage.ss_family) {
        case AF_INET: address = withUnsafeBytes(of: storage) { SocketAddress($0.load(as: sockaddr_in.self)) }
        case AF_INET6: address = withUnsafeBytes(of: storage) { SocketAddress($0.load(as: sockaddr_in6.self)) }
        default: return "unknown"
        }
        return "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
    }
}
