import NIOSSL

/// TLS for a client's TCP connections, for a server started with `--tls-cert` and `--tls-key`.
public struct EntitledClientTLS: Sendable, Hashable {
    let context: NIOSSLContext
    /// The name the server's certificate must carry; by default the host connected to.
    let serverHostname: String?
    /// The certificates of `trustedCertificatesFile`, to say why a server's certificate was refused
    /// (`CertificateProblem.diagnose`); `nil` with the system's roots.
    let trustedCertificates: [NIOSSLCertificate]?

    /// - Parameters:
    ///   - trustedCertificatesFile: PEM certificates to trust (a private CA, or the server's own
    ///     self-signed certificate); `nil` trusts the system's roots.
    ///   - serverHostname: the name to verify and to send as SNI, when it is not the host connected to.
    ///   - verifiesCertificate: `false` accepts any certificate: encrypted, but open to anyone in the
    ///     middle. For tests only.
    public init(trustedCertificatesFile: String? = nil, serverHostname: String? = nil, verifiesCertificate: Bool = true) throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        if let trustedCertificatesFile {
            configuration.trustRoots = .file(trustedCertificatesFile)
        }
        if !verifiesCertificate { configuration.certificateVerification = .none }
        context = try NIOSSLContext(configuration: configuration)
        self.serverHostname = serverHostname
        // Read a second time (NIOSSL keeps its copy in BoringSSL's store, out of reach); the context
        // above has already refused a file that cannot be read.
        trustedCertificates = try trustedCertificatesFile.map { try NIOSSLCertificate.fromPEMFile($0) }
    }

    /// Two values are equal when they share one context (a copy of this value), not when their settings match.
    public static func == (left: EntitledClientTLS, right: EntitledClientTLS) -> Bool {
        left.context === right.context && left.serverHostname == right.serverHostname
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(context))
        hasher.combine(serverHostname)
    }
}

extension String {
    /// The host as SNI takes it: nothing for an IP address (RFC 6066 forbids literal addresses there);
    /// NIOSSL then verifies the certificate against the address.
    var serverNameIndication: String? {
        let isAddress = allSatisfy { $0.isNumber || $0 == "." } || contains(":")
        return isAddress ? nil : self
    }
}
