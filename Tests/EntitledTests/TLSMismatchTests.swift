import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// A plain-text client on a TLS port, and a TLS client on a plain port, get a hint at once rather than a
/// hang: against real `entitled` processes. The proof that nothing waited for a timeout is the error
/// itself: a client that timed out reports `timedOut` (or, for the handshake, "no TLS handshake within"),
/// never the specific hint these tests expect. Elapsed time is not asserted: in the full suite, tests wait
/// tens of seconds for the shared thread pool on a loaded 2-core machine.
@Suite struct TLSMismatchTests {

    static func tlsServer() throws -> RunningEntitled {
        try RunningEntitled(arguments: ["--tls-cert", TestCertificates.certificate, "--tls-key", TestCertificates.key])
    }

    @Test func aPlainTextClientOnTheTLSPortIsToldToUseTLS() async throws {
        let server = try Self.tlsServer()
        let address = ServerAddress.tcp(host: "127.0.0.1", port: server.port)
        let connection = try await EntitledAsyncConnection.connect(to: address, timeout: .seconds(60))
        await #expect(throws: EntitledClientError.serverRequiresTLS(address: address)) {
            _ = try await connection.send(.ping, timeout: .seconds(60))
        }
        let blocking = try await TLSTrustTests.blockingError(address, tls: nil)
        #expect(blocking == .serverRequiresTLS(address: address))
        #expect(blocking?.message == "cannot connect to 127.0.0.1:\(server.port): this port speaks TLS (connect with TLS: EntitledClientTLS, entitlectl --tls, Python tls=)")
        // A client with a token asks `auth` first: it gets the same error, not a refused token.
        await #expect(throws: EntitledClientError.serverRequiresTLS(address: address)) {
            _ = try await EntitledAsyncConnection.connect(to: address, timeout: .seconds(60), token: "secret")
        }
    }

    @Test func theTLSPortAnswersPlainTextWithOneLineAndClosesCleanly() async throws {
        let server = try Self.tlsServer()
        let port = server.port
        let lines = try await onDedicatedThread { () -> [String] in
            let socket = try RawSocket(port: port)
            try socket.send(#"{"op":"ping","id":1}"# + "\n" + #"{"op":"ping","id":2}"# + "\n")
            var lines: [String] = []
            while let line = try socket.readLine() { lines.append(line) }
            return lines
        }
        #expect(lines == [
            #"{"ok":false,"error":{"code":"tls_required","message":"this port speaks TLS: connect with TLS (entitlectl --tls, EntitledClientTLS, Python tls=)"}}"#
        ])
        // The server is unharmed, and TLS clients are served.
        let tls = try EntitledClientTLS(trustedCertificatesFile: TestCertificates.certificate)
        let connection = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: port), tls: tls)
        #expect(try await connection.send(.ping).isOK)
    }

    @Test func aTLSClientOnAPlainPortIsToldThePortDoesNotSpeakTLS() async throws {
        let server = try RunningEntitled()
        let address = ServerAddress.tcp(host: "127.0.0.1", port: server.port)
        let tls = try EntitledClientTLS(trustedCertificatesFile: TestCertificates.certificate)
        await #expect(throws: EntitledClientError.serverDoesNotSpeakTLS(address: address)) {
            _ = try await EntitledAsyncConnection.connect(to: address, timeout: .seconds(60), tls: tls)
        }
        let blocking = try await TLSTrustTests.blockingError(address, tls: tls)
        #expect(blocking == .serverDoesNotSpeakTLS(address: address))
        #expect(
            blocking?.message
                == "cannot connect to 127.0.0.1:\(server.port): the server at 127.0.0.1:\(server.port) does not speak TLS on this port (connect without TLS)"
        )
        // The plain port still serves plain clients.
        let plain = try await EntitledAsyncConnection.connect(to: address)
        #expect(try await plain.send(.ping).isOK)
    }

    @Test func aTLSServerAtItsConnectionLimitIsNotTakenForAPlainPort() async throws {
        // Beyond the limit a TLS port closes a connection without the `busy` line, during the handshake.
        let server = try RunningEntitled(arguments: [
            "--tls-cert", TestCertificates.certificate, "--tls-key", TestCertificates.key, "--max-connections", "1",
        ])
        let address = ServerAddress.tcp(host: "127.0.0.1", port: server.port)
        let tls = try EntitledClientTLS(trustedCertificatesFile: TestCertificates.certificate)
        let first = try await EntitledAsyncConnection.connect(to: address, tls: tls)
        #expect(try await first.send(.ping).isOK)
        do {
            _ = try await EntitledAsyncConnection.connect(to: address, timeout: .seconds(60), tls: tls)
            Issue.record("a connection beyond the limit was opened")
        } catch {
            #expect(error.code == "tls_handshake_failed")
            #expect(
                error.message
                    == "cannot connect to 127.0.0.1:\(server.port): the TLS handshake failed: the server closed the connection during the "
                    + "handshake (it may not speak TLS on this port, or be at its connection limit)"
            )
        }
    }

    @Test func aTLSClientToAPortNobodyListensOnIsRefusedAsWithoutTLS() async throws {
        let reserved = try SilentListener(listening: false)  // bound, so no other test's server takes the port
        defer { withExtendedLifetime(reserved) {} }
        let port = reserved.port
        let address = ServerAddress.tcp(host: "127.0.0.1", port: port)
        let tls = try EntitledClientTLS(trustedCertificatesFile: TestCertificates.certificate)
        await #expect(throws: EntitledClientError.cannotConnect(address: address, reason: "connection refused")) {
            _ = try await EntitledAsyncConnection.connect(to: address, tls: tls)
        }
        #expect(try await TLSTrustTests.blockingError(address, tls: tls) == .cannotConnect(address: address, reason: "connection refused"))
    }

    @Test func aHandshakeTheServerNeverAnswersFailsWithinTheTimeout() async throws {
        // A listening socket that accepts (the kernel does) and never answers.
        let listener = try SilentListener()
        let address = ServerAddress.tcp(host: "127.0.0.1", port: listener.port)
        let tls = try EntitledClientTLS(trustedCertificatesFile: TestCertificates.certificate)
        await #expect(throws: EntitledClientError.tlsHandshakeFailed(address: address, reason: "no TLS handshake within 1 s")) {
            _ = try await EntitledAsyncConnection.connect(to: address, timeout: .seconds(1), tls: tls)
        }
    }
}
