import EntitledTestSupport
import Foundation
import Testing

/// `entitlectl --tls`/`--tls-ca` against a real `entitled --tls-cert --tls-key`, and what it says when
/// TLS stands in the way: which check of the certificate failed, a plain port or a TLS port reached the
/// wrong way, each at once: the runs give `--timeout 60`, and a run that waited for it would report a timeout,
/// never the specific hint these tests expect (elapsed time is not asserted: the suite runs on loaded machines).
@Suite struct TLSOneShotTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("EntitledServerTests/Fixtures")
    static let certificate = fixtures.appendingPathComponent("test-tls-cert.pem").path
    static let key = fixtures.appendingPathComponent("test-tls-key.pem").path
    static let testCA = fixtures.appendingPathComponent("test-ca-cert.pem").path

    static func server(certificate: String = certificate, key: String = key) throws -> RunningEntitled {
        try RunningEntitled(arguments: ["--tls-cert", certificate, "--tls-key", key])
    }

    /// Runs a one-shot `check` with `options`, expecting it to fail at once with `message` on stderr.
    static func expectRefusal(port: Int, _ options: [String], message: String) throws {
        let run = try ConsoleRun.run(["--port", String(port), "--timeout", "60"] + options + ["check", "user:u1"])
        #expect(run.status != 0)
        #expect(run.standardError == "error: \(message)\n", "\(run.standardError)")
    }

    @Test func aConsoleTrustingTheCertificateWorksOverTLS() throws {
        let server = try Self.server()
        let port = ["--port", String(server.port)]
        let grant = try ConsoleRun.run(port + ["--tls-ca", Self.certificate, "grant", "user:u1", "prod_pro"])
        #expect(grant.status == 0, "\(grant.standardError)")
        let check = try ConsoleRun.run(port + ["--tls-ca", Self.certificate, "check", "user:u1"])
        #expect(check.status == 0)
        #expect(check.standardOutput.hasPrefix("active"), "\(check.standardOutput)")
    }

    @Test func aConsoleWithoutTLSOnTheTLSPortIsToldToUseIt() throws {
        let server = try Self.server()
        try Self.expectRefusal(
            port: server.port, [],
            message: "cannot connect to 127.0.0.1:\(server.port): this port speaks TLS (connect with --tls, or --tls-ca FILE for a private CA)"
        )
    }

    @Test func aConsoleWithTLSOnAPlainPortIsToldItDoesNotSpeakTLS() throws {
        let server = try RunningEntitled()
        try Self.expectRefusal(
            port: server.port, ["--tls-ca", Self.certificate],
            message: "cannot connect to 127.0.0.1:\(server.port): the server at 127.0.0.1:\(server.port) does not speak TLS on this port (connect without --tls and --tls-ca)"
        )
    }

    @Test func aConsoleNotTrustingTheCertificateIsToldWhichCheckFailed() throws {
        let selfSigned = try Self.server()
        // The system's roots do not include the self-signed test certificate.
        try Self.expectRefusal(
            port: selfSigned.port, ["--tls"],
            message: "cannot connect to 127.0.0.1:\(selfSigned.port): the server's certificate is not trusted: it is self-signed, so signed by an unknown CA (pass that certificate with --tls-ca FILE)"
        )
        let exampleCom = try Self.server(
            certificate: Self.fixtures.appendingPathComponent("test-example-com-cert.pem").path,
            key: Self.fixtures.appendingPathComponent("test-example-com-key.pem").path
        )
        try Self.expectRefusal(
            port: exampleCom.port, ["--tls-ca", Self.certificate],
            message: "cannot connect to 127.0.0.1:\(exampleCom.port): the server's certificate is not trusted: it is signed by an unknown CA (pass the CA that signed it with --tls-ca FILE)"
        )
        try Self.expectRefusal(
            port: exampleCom.port, ["--tls-ca", Self.testCA],
            message: "cannot connect to 127.0.0.1:\(exampleCom.port): the server's certificate is for example.com, not 127.0.0.1 (connect with --host set to the name it was issued for, or reissue it)"
        )
        let expired = try Self.server(
            certificate: Self.fixtures.appendingPathComponent("test-expired-cert.pem").path,
            key: Self.fixtures.appendingPathComponent("test-expired-key.pem").path
        )
        try Self.expectRefusal(
            port: expired.port, ["--tls-ca", Self.testCA],
            message: "cannot connect to 127.0.0.1:\(expired.port): the server's certificate expired on 2021-01-01 (renew it on the server)"
        )
    }
}
