/// Why the client could not get a response. A response that reports an error (`"ok":false`) is not one of
/// these: it is a response, with its `error`.
public enum EntitledClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No connection could be made: the server is down, the address is wrong, the socket file is missing.
    case cannotConnect(address: ServerAddress, reason: String)
    /// The TLS client did not trust the server's certificate: `problem` says which check failed.
    case untrustedCertificate(address: ServerAddress, problem: CertificateProblem)
    /// A TLS client reached a port that speaks plain text: its first answer was no TLS record.
    case serverDoesNotSpeakTLS(address: ServerAddress)
    /// A plain-text client reached a port that speaks TLS (the server answered `tls_required`).
    case serverRequiresTLS(address: ServerAddress)
    /// The TLS handshake failed for another reason, or did not finish within the timeout.
    case tlsHandshakeFailed(address: ServerAddress, reason: String)
    /// The server closed the connection before it answered.
    case connectionClosed(address: ServerAddress)
    /// The connection failed while sending or receiving.
    case connectionFailed(address: ServerAddress, reason: String)
    /// No complete response arrived within the timeout.
    case timedOut(address: ServerAddress, seconds: Double)
    /// The server sent something that is not a response line.
    case malformedResponse(line: String, reason: String)
    /// A response longer than the client accepts (it guards its memory against a runaway peer).
    case responseTooLarge(address: ServerAddress, limit: Int)
    /// The server refused the token given for authentication.
    case authenticationFailed(address: ServerAddress, failure: ServerFailure)
    /// The server answered with an error (`"ok":false`). Only the typed conveniences of the async client
    /// (`EntitledPool.check`, ...) and `EntitledPool.watch` throw it; `send` returns such an answer as a
    /// response, like `EntitledConnection.send`.
    case server(ServerFailure)
    /// The task waiting for the answer was cancelled. The request may still be carried out.
    case cancelled
    /// The connection or pool was closed by its owner.
    case closed
    /// A line given to `send(line:)` holds a newline: it would be two requests with one expected answer,
    /// and every later answer would be matched to the wrong request. Nothing was sent.
    case lineContainsNewline

    /// A stable machine-readable name for the case.
    public var code: String {
        switch self {
        case .cannotConnect: "cannot_connect"
        case .untrustedCertificate: "untrusted_certificate"
        case .serverDoesNotSpeakTLS: "server_does_not_speak_tls"
        case .serverRequiresTLS: "tls_required"
        case .tlsHandshakeFailed: "tls_handshake_failed"
        case .connectionClosed: "connection_closed"
        case .connectionFailed: "connection_failed"
        case .timedOut: "timed_out"
        case .malformedResponse: "malformed_response"
        case .responseTooLarge: "response_too_large"
        case .authenticationFailed: "authentication_failed"
        case .server: "server_error"
        case .cancelled: "cancelled"
        case .closed: "closed"
        case .lineContainsNewline: "line_contains_newline"
        }
    }

    /// A sentence a person can act on, such as `cannot connect to 127.0.0.1:7117: connection refused`.
    public var message: String {
        switch self {
        case .cannotConnect(let address, let reason): "cannot connect to \(address): \(reason)"
        case .untrustedCertificate(let address, let problem): "cannot connect to \(address): \(problem.cause) (\(problem.remedy))"
        case .serverDoesNotSpeakTLS(let address):
            "cannot connect to \(address): the server at \(address) does not speak TLS on this port (connect without TLS)"
        case .serverRequiresTLS(let address):
            "cannot connect to \(address): this port speaks TLS (connect with TLS: EntitledClientTLS, entitlectl --tls, Python tls=)"
        case .tlsHandshakeFailed(let address, let reason): "cannot connect to \(address): the TLS handshake failed: \(reason)"
        case .connectionClosed(let address): "\(address) closed the connection before answering"
        case .connectionFailed(let address, let reason): "lost the connection to \(address): \(reason)"
        case .timedOut(let address, let seconds): "no response from \(address) within \(Self.format(seconds)) s"
        case .malformedResponse(let line, let reason): "the server sent a line that is not a response (\(reason)): \(line.prefix(200))"
        case .responseTooLarge(let address, let limit): "\(address) sent a response longer than \(limit) bytes"
        case .authenticationFailed(let address, let failure): "\(address) refused the token: \(failure.message)"
        case .server(let failure): "the server refused the request (\(failure.code)): \(failure.message)"
        case .cancelled: "the request was cancelled before its answer came"
        case .closed: "the connection was closed by the client"
        case .lineContainsNewline: "a request line must not contain a newline; nothing was sent"
        }
    }

    public var description: String { message }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int(seconds)) : String(seconds)
    }
}
