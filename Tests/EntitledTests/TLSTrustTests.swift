import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// A TLS client that does not trust the server's certificate is told which check failed (unknown CA,
/// expired, wrong name) and what to do, by the async and the blocking client, against a real `entitled`
/// process serving the fixture certificates of Fixtures/ (made by Fixtures/make-test-certificates.sh).
@Suite struct TLSTrustTests {
    static let fixtures = TestCertificates.directory
    static let testCA = fixtures.appendingPathComponent("test-ca-cert.pem").path
    /// Self-signed, for localhost and 127.0.0.1.
    static let selfSigned = (TestCertificates.certificate, TestCertificates.key)
    /// Issued by the test CA for localhost and 127.0.0.1; expired on 2021-01-01.
    static let expired = (
        fixtures.appendingPathComponent("test-expired-cert.pem").path, fixtures.appendingPathComponent("test-expired-key.pem").path
    )
    /// Issued by the test CA for localhost and 127.0.0.1; valid from 2100-01-01.
    static let future = (
        fixtures.appendingPathComponent("test-future-cert.pem").path, fixtures.appendingPathComponent("test-future-key.pem").path
    )
    /// Issued by the test CA for example.com only.
    static let exampleCom = (
        fixtures.appendingPathComponent("test-example-com-cert.pem").path,
        fixtures.appendingPathComponent("test-example-com-key.pem").path
    )

    static func server(_ pair: (String, String)) throws -> RunningEntitled {
        try RunningEntitled(arguments: ["--tls-cert", pair.0, "--tls-key", pair.1])
    }

    /// The error of the async client's connect and of the blocking client's first request, which must agree.
    static func failures(port: Int, tls: EntitledClientTLS) async throws -> [EntitledClientError] {
        let address = ServerAddress.tcp(host: "127.0.0.1", port: port)
        var errors: [EntitledClientError] = []
        do {
            _ = try await EntitledAsyncConnection.connect(to: address, timeout: .seconds(60), tls: tls)
        } catch {
            errors.append(error)
        }
        if let blocking = try await blockingError(address, tls: tls) { errors.append(blocking) }
        return errors
    }

    /// The error of the blocking client's first request (a ping), on a thread of its own.
    static func blockingError(_ address: ServerAddress, tls: EntitledClientTLS?) async throws -> EntitledClientError? {
        try await onDedicatedThread { () -> EntitledClientError? in
            do throws(EntitledClientError) {
                _ = try EntitledConnection(address: address, timeout: 60, tls: tls).send(.ping)
                return nil
            } catch {
                return error
            }
        }
    }

    @Test func aSelfSignedCertificateTheClientWasNotGivenIsAnUnknownCA() async throws {
        let server = try Self.server(Self.selfSigned)
        for tls in [try EntitledClientTLS(trustedCertificatesFile: Self.testCA), try EntitledClientTLS()] {
            let errors = try await Self.failures(port: server.port, tls: tls)
            #expect(errors == Array(repeating: .untrustedCertificate(
                address: .tcp(host: "127.0.0.1", port: server.port), problem: .unknownAuthority(selfSigned: true)
            ), count: 2))
        }
    }

    @Test func aCertificateSignedByACANotTrustedIsAnUnknownCA() async throws {
        let server = try Self.server(Self.exampleCom)
        // Trusts only the self-signed certificate, not the CA that signed the server's.
        let errors = try await Self.failures(port: server.port, tls: EntitledClientTLS(trustedCertificatesFile: TestCertificates.certificate))
        #expect(errors.count == 2)
        for error in errors {
            #expect(error.code == "untrusted_certificate")
            guard case .untrustedCertificate(_, let problem) = error else { continue }
            #expect(problem.code == "unknown_authority")
            #expect(
                error.message
                    == "cannot connect to 127.0.0.1:\(server.port): the server's certificate is not trusted: it is signed by an unknown CA "
                    + "(trust the CA that signed it: EntitledClientTLS(trustedCertificatesFile:), entitlectl --tls-ca FILE, Python ssl context)"
            )
        }
    }

    @Test func anExpiredCertificateIsNamedWithTheDayItExpired() async throws {
        let server = try Self.server(Self.expired)
        let errors = try await Self.failures(port: server.port, tls: EntitledClientTLS(trustedCertificatesFile: Self.testCA))
        #expect(errors.count == 2)
        for error in errors {
            #expect(error == .untrustedCertificate(address: .tcp(host: "127.0.0.1", port: server.port), problem: .expired(date: "2021-01-01")))
            #expect(error.message == "cannot connect to 127.0.0.1:\(server.port): the server's certificate expired on 2021-01-01 (renew it on the server)")
        }
    }

    @Test func aCertificateNotValidYetIsNamedWithTheDayItStarts() async throws {
        let server = try Self.server(Self.future)
        let errors = try await Self.failures(port: server.port, tls: EntitledClientTLS(trustedCertificatesFile: Self.testCA))
        #expect(errors.count == 2)
        for error in errors {
            #expect(
                error.message
                    == "cannot connect to 127.0.0.1:\(server.port): the server's certificate is not valid before 2100-01-01 "
                    + "(check both machines' clocks, or reissue it)"
            )
        }
    }

    @Test func aCertificateForAnotherNameNamesBoth() async throws {
        let server = try Self.server(Self.exampleCom)
        let errors = try await Self.failures(port: server.port, tls: EntitledClientTLS(trustedCertificatesFile: Self.testCA))
        #expect(errors.count == 2)
        for error in errors {
            #expect(
                error.message
                    == "cannot connect to 127.0.0.1:\(server.port): the server's certificate is for example.com, not 127.0.0.1 "
                    + "(connect with the name it was issued for, or reissue it)"
            )
        }
        // With the name it was issued for, the same server and CA are trusted.
        let named = try EntitledClientTLS(trustedCertificatesFile: Self.testCA, serverHostname: "example.com")
        let connection = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: server.port), tls: named)
        #expect(try await connection.send(.ping).isOK)
    }

    @Test func aTrustedCertificateStillConnects() async throws {
        let server = try Self.server(Self.selfSigned)
        let tls = try EntitledClientTLS(trustedCertificatesFile: TestCertificates.certificate)
        let connection = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: server.port), tls: tls)
        #expect(try await connection.send(.ping).isOK)
        #expect(try await Self.blockingError(.tcp(host: "127.0.0.1", port: server.port), tls: tls) == nil)
    }
}
