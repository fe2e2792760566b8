import EntitledServer
import Foundation
import Testing

/// What the server refuses to expose: unauthenticated TCP beyond loopback, a Unix socket others can use.
@Suite struct ListeningSafetyTests {
    @Test(arguments: ["0.0.0.0", "::"])
    func withoutAuthenticationANonLoopbackAddressIsRefused(host: String) async throws {
        let server = EntitledServer(store: .init(), configuration: ServerConfiguration(tcp: .init(host: host, port: 0)))
        await #expect(throws: ServerError.unauthenticatedRemoteAddress(host: host)) { try await server.start() }
    }

    @Test func insecureNoAuthOrTokensAllowANonLoopbackAddress() async throws {
        var insecure = ServerConfiguration(tcp: .init(host: "0.0.0.0", port: 0))
        insecure.allowsUnauthenticatedRemoteClients = true
        var authenticated = ServerConfiguration(tcp: .init(host: "0.0.0.0", port: 0))
        authenticated.accessTokens = try AuthenticationTests.tokens()
        for configuration in [insecure, authenticated] {
            let server = EntitledServer(store: .init(), configuration: configuration)
            #expect(try await server.start().first?.port != nil)
            await server.stop()
        }
    }

    @Test(arguments: ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"])
    func loopbackAddressesNeedNoAuthentication(host: String) async throws {
        let server = EntitledServer(store: .init(), configuration: ServerConfiguration(tcp: .init(host: host, port: 0)))
        do {
            _ = try await server.start()
            await server.stop()
        } catch ServerError.bindFailed {
            // A machine without IPv6 cannot bind ::1; the safety check passed before the bind.
        }
    }

    @Test func theUnixSocketIsForTheServersUserOnlyUnlessAModeSaysOtherwise() async throws {
        try await withTestServer(unixSocket: true) { server in
            let path = try #require(server.unixSocketPath)
            #expect(try Self.permissions(of: path) == 0o600)
        }
        try await withTestServer(unixSocket: true, configure: { $0.unixSocketMode = 0o660 }) { server in
            let path = try #require(server.unixSocketPath)
            #expect(try Self.permissions(of: path) == 0o660)
        }
    }

    static func permissions(of path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int)
    }
}
