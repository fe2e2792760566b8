import EntitledClient
import EntitledCore
import EntitledServer
import Foundation
import Testing

@Suite("Event loops: framing, spreading connections, closing")
struct EventLoopTests {
    @Test func everyLineArrivesWhateverHowTheStreamIsCut() async throws {
        try await withTestServer { server in
            let lines = (0..<200).map { #"{"op":"ping","id":"\#($0)"}"# + ($0 % 3 == 0 ? "\r\n" : "\n") }
            let stream = Array(lines.joined().utf8)
            var generator = SystemRandomNumberGenerator()
            let client = try server.rawSocket()
            // Cut the stream at random points, down to single bytes, each piece its own TCP segment.
            var offset = 0
            while offset < stream.count {
                let size = min(Int.random(in: 1...40, using: &generator), stream.count - offset)
                try client.send(bytes: Array(stream[offset..<offset + size]))
                offset += size
                if Bool.random(using: &generator) { try await Task.sleep(for: .microseconds(200)) }
            }
            for index in 0..<200 {
                let answer = try #require(try client.readLine())
                #expect(answer == #"{"ok":true,"id":"\#(index)"}"#)
            }
        }
    }

    @Test(arguments: [1, 2, 3])
    func connectionsSpreadOverSeveralLoopsAllGetTheirAnswersAndSeeEachOthersWrites(loops: Int) async throws {
        try await withTestServer(eventLoops: loops) { server in
            var clients: [EntitledAsyncConnection] = []
            for _ in 0..<7 { clients.append(try await server.connect()) }
            _ = try await clients[0].send(line: #"{"op":"define","entitlement":"pro","products":["prod_pro"]}"#)
            for (index, client) in clients.enumerated() {
                let granted = try await client.send(line: #"{"op":"grant","user":"u\#(index)","product":"prod_pro"}"#)
                #expect(granted.isOK)
                // Every other connection, on whichever loop, sees the grant once it is answered.
                for other in clients {
                    let check = try await other.send(line: #"{"op":"check","user":"u\#(index)","entitlement":"pro"}"#)
                    #expect(check.line.contains(#""active":true"#), "client on another loop: \(check.line)")
                }
            }
            #expect(server.server.connectionCount == 7)
        }
    }

    @Test func stoppingTheServerClosesConnectionsOnEveryLoop() async throws {
        let (clients, server) = try await withTestServer(eventLoops: 3) { server in
            // Raw: the test reads the end of stream the server's stop must send on each.
            let clients = try (0..<6).map { _ in try server.rawSocket() }
            for client in clients {
                try client.send(#"{"op":"ping"}"# + "\n")
                #expect(try client.readResponse().isOK)
            }
            return (clients, server.server)
        }
        for client in clients { #expect(try client.isClosedByServer()) }
        #expect(server.connectionCount == 0)
    }

    @Test func aClientThatResetsMidRequestLeavesNoTraceAndOthersAreServed() async throws {
        try await withTestServer(eventLoops: 2) { server in
            for _ in 0..<20 {
                let client = try server.rawSocket()
                try client.send(String(repeating: #"{"op":"ping"}"# + "\n", count: 500) + #"{"op":"pi"#)
                client.reset()
            }
            let survivor = try await server.connect()
            #expect(try await survivor.send(line: #"{"op":"ping"}"#).isOK)
            // The reset connections are closed and forgotten, not kept open (a generous deadline: the loops
            // may see the resets late on a machine busy with the whole suite).
            let deadline = ContinuousClock.now + .seconds(30)
            while server.server.connectionCount > 1, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(server.server.connectionCount == 1)
        }
    }

    @Test(arguments: [0, -1, 257])
    func anEventLoopCountOutOfRangeIsRefused(count: Int) async throws {
        let server = EntitledServer(
            store: EntitlementStore(),
            configuration: ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0), eventLoops: count)
        )
        await #expect(throws: ServerError.self) { try await server.start() }
        await server.stop()
    }

    @Test func busyPollingLoopsServeLoneAndPipelinedClientsAndStillTakeOverNewConnections() async throws {
        try await withTestServer(eventLoops: 2, busyPollMicroseconds: 300) { server in
            let lone = try await server.connect()
            _ = try await lone.send(line: #"{"op":"define","entitlement":"pro","products":["prod_pro"]}"#)
            for index in 0..<20 {
                // Pauses longer than the poll, so the loop alternates between spinning and sleeping.
                if index % 2 == 0 { try await Task.sleep(for: .milliseconds(2)) }
                #expect(try await lone.send(line: #"{"op":"grant","user":"u\#(index)","product":"prod_pro"}"#).isOK)
            }
            // Connections the accepting loop hands to the other loop (a posted task) while both poll, each
            // sent 50 requests in one write (raw, to control the write).
            let others = try (0..<5).map { _ in try server.rawSocket() }
            for client in others {
                try client.send(String(repeating: #"{"op":"check","user":"u7","entitlement":"pro"}"# + "\n", count: 50))
            }
            for client in others {
                for _ in 0..<50 {
                    let answer = try #require(try client.readLine())
                    #expect(answer.contains(#""active":true"#))
                }
            }
            #expect(server.server.connectionCount == 6)
        }
    }

    @Test(arguments: [-1, 10_001])
    func aBusyPollOutOfRangeIsRefused(microseconds: Int) async throws {
        let server = EntitledServer(
            store: EntitlementStore(),
            configuration: ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0), busyPollMicroseconds: microseconds)
        )
        await #expect { try await server.start() } throws: { error in
            (error as? ServerError)?.code == "invalid_busy_poll"
        }
        await server.stop()
    }
}
