/// Why a TLS client did not trust the server's certificate, found by `EntitledClientTLS`'s checks in the
/// order BoringSSL makes them: the chain to a trusted CA, then the dates, then the name.
public enum CertificateProblem: Sendable, Hashable {
    /// No trusted CA signed it: it is signed by a CA the client was not given, or (`selfSigned`) by itself.
    case unknownAuthority(selfSigned: Bool)
    /// Its validity ended on `date` (`YYYY-MM-DD`, UTC).
    case expired(date: String)
    /// Its validity starts on `date` (`YYYY-MM-DD`, UTC): it was issued for the future, or a clock is wrong.
    case notYetValid(date: String)
    /// It names `certificateNames` (its subject alternative names, else its common name), not `host`, the
    /// name the client connected to (or gave as `serverHostname`).
    case wrongName(certificateNames: [String], host: String)
    /// The verification failed for another reason, in BoringSSL's words.
    case other(reason: String)

    /// A stable machine-readable name for the case.
    public var code: String {
        switch self {
        case .unknownAuthority: "unknown_authority"
        case .expired: "expired"
        case .notYetValid: "not_yet_valid"
        case .wrongName: "wrong_name"
        case .other: "other"
        }
    }

    /// What is wrong, as a clause: `the server's certificate expired on 2025-01-01`.
    public var cause: String {
        switch self {
        case .unknownAuthority(let selfSigned):
            selfSigned
                ? "the server's certificate is not trusted: it is self-signed, so signed by an unknown CA"
                : "the server's certificate is not trusted: it is signed by an unknown CA"
        case .expired(let date): "the server's certificate expired on \(date)"
        case .notYetValid(let date): "the server's certificate is not valid before \(date)"
        case .wrongName(let names, let host):
            "the server's certificate is for \(names.isEmpty ? "no name" : names.joined(separator: ", ")), not \(host)"
        case .other(let reason): "the server's certificate is not trusted (\(reason))"
        }
    }

    /// What to do about it, for any client of this package.
    public var remedy: String {
        switch self {
        case .unknownAuthority(let selfSigned):
            selfSigned
                ? "trust that certificate: EntitledClientTLS(trustedCertificatesFile:), entitlectl --tls-ca FILE, Python ssl context"
                : "trust the CA that signed it: EntitledClientTLS(trustedCertificatesFile:), entitlectl --tls-ca FILE, Python ssl context"
        case .expired: "renew it on the server"
        case .notYetValid: "check both machines' clocks, or reissue it"
        case .wrongName: "connect with the name it was issued for, or reissue it"
        case .other: "check the certificate and the CA given to the client"
        }
    }
}
