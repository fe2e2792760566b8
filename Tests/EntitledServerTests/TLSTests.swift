import EntitledClient
import EntitledServer
import EntitledTestSupport
import Foundation
import Testing

/// TLS on TCP (`--tls-cert`, `--tls-key`), against an in-process server with the self-signed test
/// certificate in Fixtures/ (valid for localhost and 127.0.0.1 until 2126).
@Suite struct TLSTests {
    static let certificate = TestCertificates.certificate
    static let key = TestCertificates.key

    static func withTLSServer(unixSocket: Bool = false, _ body: (RunningServer) async throws -> Void) async throws {
        let tls = try ServerTLS(certificateChainFile: certificate, privateKeyFile: key)
        try await withTestServer(unixSocket: unixSocket, configure: { $0.tls = tls }, body)
    }

    static func trustingClient(port: Int) async throws -> EntitledAsyncConnection {
        try await EntitledAsyncConnection.connect(
            to: .tcp(host: "127.0.0.1", port: port), tls: EntitledClientTLS(trustedCertificatesFile: certificate)
        )
    }

    @Test func aClientTrustingTheCertificateIsAnsweredOverTLS() async throws {
        try await Self.withTLSServer { server in
            let connection = try await Self.trustingClient(port: server.port)
            #expect(try await connection.send(.grant(user: "u1", product: "prod_pro")).isOK)
            #expect(try await connection.send(.check(user: "u1")).line == #"{"ok":true,"active":true,"expiresAt":null}"#)
        }
    }

    @Test func pipelinedRequestsAndAnswersLargerThanATLSRecordCrossIntact() async throws {
        try await Self.withTLSServer { server in
            let connection = try await Self.trustingClient(port: server.port)
            // 300 memberships: a listing of about 100 KB, several TLS records (16 KB each).
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<300 {
                    group.addTask {
                        let answer = try await connection.send(.grant(user: "big", product: "prod_\(index)"), timeout: .seconds(30))
                        #expect(answer.isOK)
                    }
                }
                try await group.waitForAll()
            }
            let listing = try await connection.send(line: #"{"op":"memberships","user":"big","limit":1000}"#)
            #expect(listing.memberships?.count == 300)
            #expect(listing.line.utf8.count > 64_000)
        }
    }

    @Test func aClientThatDoesNotTrustTheCertificateCannotConnect() async throws {
        try await Self.withTLSServer { server in
            // The system's roots do not include the self-signed test certificate. (TLSTrustTests tells the
            // reasons apart; TLSMismatchTests has plain-text clients on this port.)
            let address = ServerAddress.tcp(host: "127.0.0.1", port: server.port)
            await #expect(throws: EntitledClientError.untrustedCertificate(address: address, problem: .unknownAuthority(selfSigned: true))) {
                _ = try await EntitledAsyncConnection.connect(to: address, tls: EntitledClientTLS())
            }
        }
    }

    @Test func theUnixSocketStaysPlainText() async throws {
        try await Self.withTLSServer(unixSocket: true) { server in
            let path = try #require(server.unixSocketPath)
            let connection = try await EntitledAsyncConnection.connect(to: .unixSocket(path: path))
            #expect(try await connection.send(line: #"{"op":"ping","id":1}"#).line == #"{"ok":true,"id":1}"#)
        }
    }

    @Test func unusableFilesAreRefusedWithAReason() throws {
        #expect(throws: TLSSetupError.self) { try ServerTLS(certificateChainFile: "/nonexistent.pem", privateKeyFile: Self.key) }
        #expect(throws: TLSSetupError.self) { try ServerTLS(certificateChainFile: Self.certificate, privateKeyFile: "/nonexistent.pem") }
        // The certificate given as the key: not a key.
        #expect(throws: TLSSetupError.self) { try ServerTLS(certificateChainFile: Self.certificate, privateKeyFile: Self.certificate) }
    }
}
