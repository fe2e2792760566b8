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
            let client = try server.connect()
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
            let clients = try (0..<7).map { _ in try server.connect() }
            _ = try clients[0].request(#"{"op":"define","entitlement":"pro","products":["prod_pro"]}"#)
            for (index, client) in clients.enumerated() {
                let granted = try client.request(#"{"op":"grant","user":"u\#(index)","product":"prod_pro"}"#)
                #expect(granted.ok == true)
                // Every other connection, on whichever loop, sees the grant once it is answered.
                for other in clients {
                    let check = try other.request(#"{"op":"check","user":"u\#(index)","entitlement":"pro"}"#)
                    #expect(check.line.contains(#""active":true"#), "client on another loop: \(check)")
                }
            }
            #expect(server.server.connectionCount == 7)
        }
    }

    @Test func stoppingTheServerClosesConnectionsOnEveryLoop() async throws {
        let (clients, server) = try await withTestServer(eventLoops: 3) { server in
            let clients = try (0..<6).map { _ in try server.connect() }
            for client in clients { #expect(try client.request(#"{"op":"ping"}"#).ok == true) }
            return (clients, server.server)
        }
        for client in clients { #expect(try client.isClosedByServer()) }
        #expect(server.connectionCount == 0)
    }

    @Test func aClientThatResetsMidRequestLeavesNoTraceAndOthersAreServed() async throws {
        try await withTestServer(eventLoops: 2) { server in
            for _ in 0..<20 {
                let client = try server.connect()
                try client.send(String(repeating: #"{"op":"ping"}"# + "\n", count: 500) + #"{"op":"pi"#)
                client.reset()
            }
            let survivor = try server.connect()
            #expect(try survivor.request(#"{"op":"ping"}"#).ok == true)
            // The reset connections are closed and forgotten, not kept open.
            let deadline = ContinuousClock.now + .seconds(5)
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
            let lone = try server.connect()
            _ = try lone.request(#"{"op":"define","entitlement":"pro","products":["prod_pro"]}"#)
            for index in 0..<20 {
                // Pauses longer than the poll, so the loop alternates between spinning and sleeping.
                if index % 2 == 0 { try await Task.sleep(for: .milliseconds(2)) }
                #expect(try lone.request(#"{"op":"grant","user":"u\#(index)","product":"prod_pro"}"#).ok == true)
            }
            // Connections the accepting loop hands to the other loop (a posted task) while both poll.
            let others = try (0..<5).map { _ in try server.connect() }
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
