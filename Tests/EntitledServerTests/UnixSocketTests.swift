import EntitledClient
import EntitledCore
import EntitledServer
import EntitledTestSupport
import Foundation
import Logging
import Testing

@Suite("The Unix socket listener")
struct UnixSocketTests {
    @Test func theUnixSocketServesTheSameProtocolAndStoreAsTCP() async throws {
        try await withTestServer(unixSocket: true) { server in
            let path = try #require(server.unixSocketPath)
            let unix = try await EntitledAsyncConnection.connect(to: .unixSocket(path: path))
            let grant = try await unix.send(line: #"{"op":"grant","device":"d1","product":"prod_pro","id":"via-unix"}"#)
            #expect(grant.isOK)
            #expect(grant["id"]?.stringValue == "via-unix")
            // Both listeners answer from the one store.
            #expect(try await server.connect().send(line: #"{"op":"check","device":"d1","product":"prod_pro"}"#).active == true)
            // Pipelining works the same: two requests in one write (raw, to control the write).
            let raw = try RawSocket(unixSocketPath: path)
            try raw.send(#"{"op":"ping","id":1}"# + "\n" + #"{"op":"ping","id":2}"# + "\n")
            #expect(try raw.readResponse()["id"]?.intValue == 1)
            #expect(try raw.readResponse()["id"]?.intValue == 2)
        }
    }

    @Test func stoppingTheServerRemovesTheSocketFileAndClosesConnections() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/e.sock"
        let server = EntitledServer(
            store: EntitlementStore(),
            configuration: ServerConfiguration(tcp: nil, unixSocketPath: path)
        )
        try await server.start()
        #expect(FileManager.default.fileExists(atPath: path))
        // Raw: the test reads the end of stream the server's stop must send.
        let connection = try RawSocket(unixSocketPath: path)
        try connection.send(#"{"op":"ping"}"# + "\n")
        #expect(try connection.readResponse().isOK)
        await server.stop()
        #expect(try connection.isClosedByServer())
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aStaleSocketFileLeftByADeadServerIsReplaced() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/e.sock"
        // A socket file nobody listens on, as a killed server leaves it.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        close(stale)
        #expect(FileManager.default.fileExists(atPath: path))

        let server = EntitledServer(store: EntitlementStore(), configuration: ServerConfiguration(tcp: nil, unixSocketPath: path))
        try await server.start()
        #expect(try await EntitledAsyncConnection.connect(to: .unixSocket(path: path)).send(line: #"{"op":"ping"}"#).isOK)
        await server.stop()
    }

    @Test func aSecondServerRefusesASocketALiveServerIsUsing() async throws {
        try await withTestServer(unixSocket: true) { running in
            let path = try #require(running.unixSocketPath)
            let second = EntitledServer(store: EntitlementStore(), configuration: ServerConfiguration(tcp: nil, unixSocketPath: path))
            await #expect(throws: ServerError.self) { try await second.start() }
            // The first server still serves on it.
            #expect(try await EntitledAsyncConnection.connect(to: .unixSocket(path: path)).send(line: #"{"op":"ping"}"#).isOK)
        }
    }

    @Test func stoppingLeavesASocketFileThatIsNoLongerItsOwn() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/e.sock"
        let server = EntitledServer(store: EntitlementStore(), configuration: ServerConfiguration(tcp: nil, unixSocketPath: path))
        try await server.start()
        // Someone replaced the socket file (an operator, or a second server that took the path over).
        #expect(unlink(path) == 0)
        #expect(FileManager.default.createFile(atPath: path, contents: Data("not ours".utf8)))
        await server.stop()
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func aServerStartsOnceAndCannotBeRestartedAfterStopping() async throws {
        let server = EntitledServer(
            store: EntitlementStore(),
            configuration: ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0))
        )
        try await server.start()
        await #expect(throws: ServerError.self) { try await server.start() }
        await server.stop()
        await #expect(throws: ServerError.self) { try await server.start() }
    }

    @Test func aServerWithNothingToListenOnRefusesToStart() async throws {
        let server = EntitledServer(store: EntitlementStore(), configuration: ServerConfiguration(tcp: nil, unixSocketPath: nil))
        await #expect(throws: ServerError.self) { try await server.start() }
    }
}
