import EntitledClient
import EntitledCore
import EntitledStorage
import EntitledTestSupport
import Foundation
import Testing

/// The real executable, started on a data directory whose snapshot takes a moment to load: it accepts
/// connections at once and answers every request `loading` with its progress, then serves on the same
/// port, closing the connections it took while loading.
@Suite struct LoadingAnswersTests {
    /// A snapshot of `count` memberships, one per user `u0` ... (each with `pro`), and nothing else.
    static func seed(_ directory: String, memberships count: Int) throws {
        var table = MembershipTable()
        let created = Timestamp(millisecondsSinceEpoch: 1_700_000_000_000)  // 2023: before any test runs
        for index in 0..<count {
            table.append(
                Membership(
                    id: MembershipID(bits: UInt64(index + 1) &* 0x9E37_79B9_7F4A_7C15), productId: "prod_pro", user: "u\(index)",
                    createdAt: created, expiresAt: Timestamp(millisecondsSinceEpoch: 4_000_000_000_000)
                )
            )
        }
        _ = try DurableStore.seed(directory: directory, with: StoreImage(sequence: 1, memberships: table, catalog: ["pro": ["prod_pro"]]))
    }

    /// A server started with `arguments` on a fresh directory holding a snapshot of 300,000 memberships
    /// (about a second of loading in a debug build: long enough to be seen loading), once it says it
    /// answers `loading`; the TCP port it answers on. The directory lives as long as the value.
    struct StartingServer {
        let directory: TemporaryDirectory
        let process: ServerProcess
        let port: Int
    }

    static func startLoading(_ arguments: [String] = []) throws -> StartingServer {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        try seed(data, memberships: 300_000)
        let process = ServerProcess(
            arguments: ["--port", "0", "--data-dir", data, "--snapshot-interval", "0"] + arguments, workingDirectory: directory.path
        )
        try process.start()
        guard process.waitForStandardError(containing: "answering `loading` while the data loads") else {
            _ = process.stop()
            throw TestSupportFailure(description: "no `loading` announcement; stderr: \(process.standardErrorReadSoFar())")
        }
        let announced = process.standardErrorReadSoFar().firstMatch(of: /addresses=tcp 127\.0\.0\.1:(\d+) \[entitled\] answering/)
        guard let port = announced.flatMap({ Int($0.1) }) else {
            _ = process.stop()
            throw TestSupportFailure(description: "the announcement names no TCP port: \(process.standardErrorReadSoFar())")
        }
        return StartingServer(directory: directory, process: process, port: port)
    }

    @Test func aStartingServerAnswersLoadingWithItsProgressThenServesOnTheSamePort() throws {
        let starting = try Self.startLoading(["--log-level", "info"])
        let (server, port) = (starting.process, starting.port)
        defer { _ = server.stop() }

        let early = try LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 30)
        defer { close(early) }
        let answer = try LoopbackSocket.call(early, #"{"op":"check","user":"u1","entitlement":"pro","id":"first"}"#)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any], "\(answer)")
        #expect(object["ok"] as? Bool == false)
        #expect(object["id"] as? String == "first")
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["code"] as? String == "loading", "\(answer)")
        let (loaded, total) = (try #require(error["loaded"] as? Int), try #require(error["total"] as? Int))
        #expect(loaded >= 0 && loaded <= total && total <= 300_000)
        #expect((error["message"] as? String)?.contains("loading its data") == true)
        // Every request, `ping` included, until it is ready; a line that is not JSON too.
        #expect(try LoopbackSocket.call(early, #"{"op":"ping"}"#).contains(#""code":"loading""#))
        #expect(try LoopbackSocket.call(early, "not json").contains(#""code":"loading""#))

        // Ready on the same port; the connection taken while loading is closed.
        let readyPort = try server.waitUntilReady(timeout: .seconds(120))
        #expect(readyPort == port)
        #expect(try LoopbackSocket.call(early, #"{"op":"ping"}"#).isEmpty, "a connection made while loading stays open after the start")
        let served = try LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 30)
        defer { close(served) }
        let check = try LoopbackSocket.call(served, #"{"op":"check","user":"u299999","entitlement":"pro"}"#)
        #expect(check.hasPrefix(#"{"ok":true,"active":true"#), "\(check)")
    }

    @Test func aLineOverTheLimitWhileLoadingIsRefusedAndItsConnectionClosed() throws {
        let starting = try Self.startLoading(["--max-line-length", "1024"])
        let (server, port) = (starting.process, starting.port)
        defer { _ = server.stop() }
        let socket = try LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 30)
        defer { close(socket) }
        let answer = try LoopbackSocket.call(socket, String(repeating: "x", count: 4096))
        #expect(answer.contains(#""code":"too_large""#), "\(answer)")
        #expect(try LoopbackSocket.call(socket, #"{"op":"ping"}"#).isEmpty, "the connection stays open after a line over the limit")
        #expect(try server.waitUntilReady(timeout: .seconds(120)) == port)
    }

    @Test func theConnectionLimitHoldsWhileLoading() throws {
        let starting = try Self.startLoading(["--max-connections", "2"])
        let (server, port) = (starting.process, starting.port)
        defer { _ = server.stop() }
        let kept = try (0..<2).map { _ in try LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 30) }
        defer { kept.forEach { close($0) } }
        for socket in kept { #expect(try LoopbackSocket.call(socket, #"{"op":"ping"}"#).contains(#""code":"loading""#)) }
        // One over the limit is closed as soon as it is accepted.
        let extra = try LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 30)
        defer { close(extra) }
        #expect(try LoopbackSocket.call(extra, #"{"op":"ping"}"#).isEmpty, "a connection over the limit was answered while loading")
        #expect(try server.waitUntilReady(timeout: .seconds(120)) == port)
    }

    @Test func aPoolAskingAStartingServerGetsItsAnswerOnceTheServerIsReady() async throws {
        let starting = try Self.startLoading()
        let (server, port) = (starting.process, starting.port)
        defer { _ = server.stop() }
        // Still loading (the pool's retries themselves are proven against a scripted server, in
        // LoadingRetryTests): whenever the pool's request lands, it gets the ready server's answer.
        let probe = try LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 30)
        defer { close(probe) }
        #expect(try LoopbackSocket.call(probe, #"{"op":"ping"}"#).contains(#""code":"loading""#))
        let pool = EntitledPool(address: .tcp(host: "127.0.0.1", port: port), configuration: .init(connections: 1, requestTimeout: .seconds(120)))
        let access = try await pool.check(user: "u299999", entitlement: "pro")
        #expect(access.isActive)
        await pool.close()
    }
}

