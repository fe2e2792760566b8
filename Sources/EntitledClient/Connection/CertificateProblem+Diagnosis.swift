#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOSSL

extension CertificateProblem {
    /// Why BoringSSL refused `certificate` (the server's own, the chain's first), when it failed the
    /// handshake with CERTIFICATE_VERIFY_FAILED.
    ///
    /// NIOSSL reports only that the verification failed, not X509's reason (`SSL_get_verify_result` is not
    /// exposed, and a custom verification callback would replace BoringSSL's verification rather than
    /// report on it). So the reason is found again from the certificate, in BoringSSL's order: first
    /// whether a trusted certificate issued it (or is it), then its dates. `trusted` are the certificates
    /// the client was given; `nil` for the system's roots, which are not read: a certificate from a public
    /// CA comes with intermediates the client does not see here, so only a self-signed one is known to
    /// have an unknown issuer then.
    static func diagnose(_ certificate: NIOSSLCertificate, trusted: [NIOSSLCertificate]?, now: time_t = time(nil)) -> CertificateProblem {
        let selfSigned = certificate.issuerName == certificate.subjectName
        if let trusted {
            let anchored = trusted.contains { $0 == certificate || $0.subjectName == certificate.issuerName }
            if !anchored { return .unknownAuthority(selfSigned: selfSigned) }
        } else if selfSigned {
            return .unknownAuthority(selfSigned: true)
        }
        if certificate.notValidAfter < now { return .expired(date: Self.day(certificate.notValidAfter)) }
        if certificate.notValidBefore > now { return .notYetValid(date: Self.day(certificate.notValidBefore)) }
        // Dates fine and anchored by name: an intermediate or a signature that does not verify, a purpose
        // the certificate lacks. With the system's roots, most likely an issuer they do not hold.
        return trusted == nil ? .unknownAuthority(selfSigned: false) : .other(reason: "its chain does not verify against the trusted certificates")
    }

    /// The names a certificate is for: its subject alternative names (DNS names and IP addresses), or its
    /// common name when it has none (which is what clients fall back to).
    static func names(of certificate: NIOSSLCertificate) -> [String] {
        var names: [String] = []
        for name in certificate._subjectAlternativeNames() {
            switch name.nameType {
            case .dnsName: names.append(String(decoding: name.contents, as: UTF8.self))
            case .ipAddress: if let address = Self.address(Array(name.contents)) { names.append(address) }
            default: continue
            }
        }
        if names.isEmpty {
            names = certificate.subjectName.filter { $0.type == .commonName }.map(\.value)
        }
        return names
    }

    private static func address(_ bytes: [UInt8]) -> String? {
        let family: Int32
        switch bytes.count {
        case 4: family = AF_INET
        case 16: family = AF_INET6
        default: return nil
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        guard written != nil else { return nil }
        return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// `YYYY-MM-DD` in UTC.
    static func day(_ seconds: time_t) -> String {
        var moment = seconds
        var parts = tm()
        gmtime_r(&moment, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
    }
}
