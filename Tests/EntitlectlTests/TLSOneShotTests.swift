import EntitledTestSupport
import Foundation
import Testing

/// `entitlectl --tls-ca` against a real `entitled --tls-cert --tls-key`.
@Suite struct TLSOneShotTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("EntitledServerTests/Fixtures")
    static let certificate = fixtures.appendingPathComponent("test-tls-cert.pem").path
    static let key = fixtures.appendingPathComponent("test-tls-key.pem").path

    @Test func aConsoleTrustingTheCertificateWorksOverTLSAndOneWithoutTLSGetsNoAnswer() throws {
        let server = try RunningEntitled(arguments: ["--tls-cert", Self.certificate, "--tls-key", Self.key])
        let port = ["--port", String(server.port)]
        let grant = try ConsoleRun.run(port + ["--tls-ca", Self.certificate, "grant", "user:u1", "prod_pro"])
        #expect(grant.status == 0, "\(grant.standardError)")
        let check = try ConsoleRun.run(port + ["--tls-ca", Self.certificate, "check", "user:u1"])
        #expect(check.status == 0)
        #expect(check.standardOutput.hasPrefix("active"), "\(check.standardOutput)")

        let plain = try ConsoleRun.run(port + ["--timeout", "3", "check", "user:u1"])
        #expect(plain.status != 0)
        // The system's roots do not include the self-signed test certificate.
        let untrusted = try ConsoleRun.run(port + ["--tls", "--timeout", "3", "check", "user:u1"])
        #expect(untrusted.status != 0)
    }
}
