import EntitledTestSupport
import EntitledCore
import EntitledServer
import Foundation
import Logging
import Testing

@Suite("The Unix socket listener")
struct UnixSocketTests {
    @Test func theUnixSocketServesTheSameProtocolAndStoreAsTCP() async throws {
        try await withTestServer(unixSocket: true) { server in
            let path = try #require(server.unixSocketPath)
            let unix = try LineConnection(unixSocketPath: path)
            let grant = try unix.request(#"{"op":"grant","device":"d1","product":"prod_pro","id":"via-unix"}"#)
            #expect(grant.ok == true)
            #expect(grant["id"] as? String == "via-unix")
            // Both listeners answer from the one store.
            #expect(try server.connect().request(#"{"op":"check","device":"d1","product":"prod_pro"}"#).active == true)
            // Pipelining works the same.
            try unix.send(#"{"op":"ping","id":1}"# + "\n" + #"{"op":"ping","id":2}"# + "\n")
            #expect(try JSONObject(line: try #require(try unix.readLine()))["id"] as? Int == 1)
            #expect(try JSONObject(line: try #require(try unix.readLine()))["id"] as? Int == 2)
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
        let connection = try LineConnection(unixSocketPath: path)
        #expect(try connection.request(#"{"op":"ping"}"#).ok == true)
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
        #expect(try LineConnection(unixSocketPath: path).request(#"{"op":"ping"}"#).ok == true)
        await server.stop()
    }

    @Test func aSecondServerRefusesASocketALiveServerIsUsing() async throws {
        try await withTestServer(unixSocket: true) { running in
            let path = try #require(running.unixSocketPath)
            let second = EntitledServer(store: EntitlementStore(), configuration: ServerConfiguration(tcp: nil, unixSocketPath: path))
            await #expect(throws: ServerError.self) { try await second.start() }
            // The first server still serves on it.
            #expect(try LineConnection(unixSocketPath: path).request(#"{"op":"ping"}"#).ok == true)
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
