import NIOSSL

/// The server's certificate and key for TLS on TCP (`--tls-cert`, `--tls-key`).
public struct ServerTLS: Sendable {
    let context: NIOSSLContext
    /// When the server's own certificate (the chain's first) stops being valid, in Unix seconds.
    public let certificateExpiresAt: Int64
    /// How close to its expiry a certificate is warned about at start.
    public static let expiryWarningSeconds: Int64 = 14 * 86_400

    /// Reads a PEM certificate chain (the server's certificate first) and its PEM private key.
    public init(certificateChainFile: String, privateKeyFile: String) throws(TLSSetupError) {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateChainFile)
        } catch {
            throw .unreadableCertificate(path: certificateChainFile, reason: "\(error)")
        }
        guard !chain.isEmpty else { throw .unreadableCertificate(path: certificateChainFile, reason: "it holds no PEM certificate") }
        certificateExpiresAt = Int64(chain[0].notValidAfter)
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: privateKeyFile, format: .pem)
        } catch {
            throw .unreadableKey(path: privateKeyFile, reason: "\(error)")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key)
        )
        // TLS 1.2 at least: older versions have known weaknesses and no client this serves needs them.
        configuration.minimumTLSVersion = .tlsv12
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw .invalidPair(reason: "\(error)")
        }
    }
}

extension ServerTLS {
    /// A warning for the start's log when the certificate has expired or expires within
    /// `expiryWarningSeconds` of `now` (Unix seconds); `nil` otherwise. Clients refuse an expired
    /// certificate, so the server would start and no client could connect.
    public func expiryWarning(now: Int64) -> String? {
        let left = certificateExpiresAt - now
        if left <= 0 { return "the TLS certificate expired \(-left / 86_400) days ago: clients will refuse it; renew it" }
        if left <= Self.expiryWarningSeconds { return "the TLS certificate expires in \(left / 86_400) days: renew it" }
        return nil
    }
}

/// Why TLS could not be set up.
public enum TLSSetupError: Error, Sendable, Hashable, CustomStringConvertible {
    case unreadableCertificate(path: String, reason: String)
    case unreadableKey(path: String, reason: String)
    /// The key does not match the certificate, or the pair is refused by BoringSSL.
    case invalidPair(reason: String)

    public var code: String {
        switch self {
        case .unreadableCertificate: "tls_certificate_unreadable"
        case .unreadableKey: "tls_key_unreadable"
        case .invalidPair: "tls_invalid_pair"
        }
    }

    public var message: String {
        switch self {
        case .unreadableCertificate(let path, let reason): "cannot read the TLS certificate chain \(path): \(reason)"
        case .unreadableKey(let path, let reason): "cannot read the TLS private key \(path): \(reason)"
        case .invalidPair(let reason): "the TLS certificate and key cannot be used together: \(reason)"
        }
    }

    public var description: String { message }
}
