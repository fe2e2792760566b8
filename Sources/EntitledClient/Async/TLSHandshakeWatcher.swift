#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOSSL
import NIOTLS

/// Sits right after NIOSSL's client handler until the handshake is over: completes `handshake` when it
/// succeeds, and fails it with an `EntitledClientError` that says why when it does not (a certificate
/// the client does not trust and which check failed, a port that does not speak TLS), rather than
/// BoringSSL's text. `EntitledAsyncConnection.open` waits for it, so a connection is handed out only
/// once TLS is up, and a failed handshake is a failed connect.
final class TLSHandshakeWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let handshake: EventLoopPromise<Void>
    private let address: ServerAddress
    /// The name the certificate must carry: the one given, else the host connected to.
    private let expectedName: String
    private let trusted: [NIOSSLCertificate]?

    init(handshake: EventLoopPromise<Void>, address: ServerAddress, expectedName: String, trusted: [NIOSSLCertificate]?) {
        self.handshake = handshake
        self.address = address
        self.expectedName = expectedName
        self.trusted = trusted
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.fireUserInboundEventTriggered(event)
        if case TLSUserEvent.handshakeCompleted = event {
            handshake.succeed()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOSSL reports the failure before it closes the channel: its session still holds the server's
        // certificate here. The first error is the cause; a promise completed twice keeps the first.
        let peer = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self).peerCertificate
        handshake.fail(classify(error, peer: peer))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        handshake.fail(EntitledClientError.tlsHandshakeFailed(address: address, reason: Self.closedDuringHandshake))
        context.fireChannelInactive()
    }

    /// A connect that failed, or a channel closed before the handshake began, completes the promise too.
    func handlerRemoved(context: ChannelHandlerContext) {
        handshake.fail(EntitledClientError.tlsHandshakeFailed(address: address, reason: Self.closedDuringHandshake))
    }

    static let closedDuringHandshake =
        "the server closed the connection during the handshake (it may not speak TLS on this port, or be at its connection limit)"

    /// The client error for a failure of the handshake.
    func classify(_ error: any Error, peer: NIOSSLCertificate?) -> EntitledClientError {
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            let names = peer.map(CertificateProblem.names(of:)) ?? []
            return .untrustedCertificate(address: address, problem: .wrongName(certificateNames: names, host: expectedName))
        }
        if case NIOSSLError.handshakeFailed(let failure) = error {
            let stack: NIOBoringSSLErrorStack
            switch failure {
            case .sslError(let errors), .unknownError(let errors): stack = errors
            default: stack = []
            }
            if stack.contains(.eofDuringHandshake) {
                return .tlsHandshakeFailed(address: address, reason: Self.closedDuringHandshake)
            }
            // BoringSSL's reason names (its `SSL_R_...` constants) are stable; their codes are not exposed.
            let text = stack.map(\.description).joined(separator: "; ")
            // The first bytes the server answered are no TLS record header: plain text (this server
            // answers a ClientHello on a plain port with a plain line, so the client fails at once).
            if text.contains("WRONG_VERSION_NUMBER") || text.contains("UNEXPECTED_RECORD") || text.contains("RECORD_TOO_LARGE")
                || text.contains("HTTP_REQUEST")
            {
                return .serverDoesNotSpeakTLS(address: address)
            }
            if text.contains("CERTIFICATE_VERIFY_FAILED") {
                guard let peer else {
                    return .untrustedCertificate(address: address, problem: .other(reason: "the server's certificate could not be read"))
                }
                return .untrustedCertificate(address: address, problem: CertificateProblem.diagnose(peer, trusted: trusted))
            }
            return .tlsHandshakeFailed(address: address, reason: text.isEmpty ? "\(failure)" : Self.reasonNames(text))
        }
        if let error = error as? IOError {
            if error.errnoCode == ECONNRESET || error.errnoCode == EPIPE {
                return .tlsHandshakeFailed(address: address, reason: Self.closedDuringHandshake)
            }
            return .tlsHandshakeFailed(address: address, reason: systemErrorText(error.errnoCode))
        }
        return .tlsHandshakeFailed(address: address, reason: String(describing: error))
    }

    /// `Error: 268435581 error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at ...`
    /// shortened to its reason, `CERTIFICATE_VERIFY_FAILED`, for each error of the stack.
    static func reasonNames(_ text: String) -> String {
        text.split(separator: "; ").map { entry in
            guard let reason = entry.firstRange(of: "OPENSSL_internal:") else { return String(entry) }
            return String(entry[reason.upperBound...].prefix { $0 != " " })
        }.joined(separator: ", ")
    }
}
