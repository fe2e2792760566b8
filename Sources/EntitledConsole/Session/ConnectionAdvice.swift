import EntitledClient

/// What the console says when TLS stands in the way: the client library's messages name the fix for every
/// client of the package; a person at the console needs the option to change.
public enum ConnectionAdvice {
    /// The sentence for a TLS connection error, with `entitlectl`'s options as the fix; `nil` for any
    /// other error.
    public static func message(for error: EntitledClientError) -> String? {
        switch error {
        case .untrustedCertificate(let address, let problem):
            let remedy: String
            switch problem {
            case .unknownAuthority(selfSigned: true): remedy = "pass that certificate with --tls-ca FILE"
            case .unknownAuthority(selfSigned: false): remedy = "pass the CA that signed it with --tls-ca FILE"
            case .wrongName: remedy = "connect with --host set to the name it was issued for, or reissue it"
            case .other: remedy = "check the certificate, and the CA given with --tls-ca"
            case .expired, .notYetValid: remedy = problem.remedy
            }
            return "cannot connect to \(address): \(problem.cause) (\(remedy))"
        case .serverDoesNotSpeakTLS(let address):
            return "cannot connect to \(address): the server at \(address) does not speak TLS on this port (connect without --tls and --tls-ca)"
        case .serverRequiresTLS(let address):
            return "cannot connect to \(address): this port speaks TLS (connect with --tls, or --tls-ca FILE for a private CA)"
        default:
            return nil
        }
    }
}
