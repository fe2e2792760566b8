import EntitledClient
import EntitledServer
import EntitledTestSupport
import Foundation
import Testing

/// The connection limit, the idle timeout and the per-turn request cap, against an in-process server.
@Suite struct ConnectionLimitsTests {
    @Test func oneConnectionBeyondTheLimitIsAnsweredBusyAndClosedAndAPlaceThatFreesUpIsUsable() async throws {
        try await withTestServer(configure: { $0.maximumConnections = 3 }) { server in
            var held: [EntitledAsyncConnection] = []
            for _ in 0..<3 {
                let connection = try await server.connect()
                #expect(try await connection.send(line: #"{"op":"ping"}"#).isOK)  // accepted and counted
                held.append(connection)
            }
            let refused = try server.rawSocket()
            let busy = try refused.readResponse()
            #expect(busy.errorCode == "busy")
            #expect(busy.error?.message.contains("limit of 3 connections") == true)
            #expect(try refused.isClosedByServer())
            #expect(server.server.connectionCount == 3)

            await held.removeLast().close()
            try await Self.waitUntil { server.server.connectionCount == 2 }
            let admitted = try await server.connect()
            #expect(try await admitted.send(line: #"{"op":"ping"}"#).isOK)
        }
    }

    @Test func anIdleConnectionIsClosedButOneThatWatchesOrKeepsTalkingIsNot() async throws {
        try await withTestServer(configure: { $0.idleTimeoutSeconds = 1 }) { server in
            let port = server.port
            // Raw sockets on a thread of their own: every step is timed against the server's idle clock, and
            // a client waiting a second for a busy task pool would be closed for real.
            let outcome = try await onDedicatedThread { () -> [String] in
                let watcher = try RawSocket(port: port)
                try watcher.send(#"{"op":"watch","user":"u1"}"# + "\n")
                let idle = try RawSocket(port: port)
                let talker = try RawSocket(port: port)
                var lines = [try watcher.readLine() ?? "closed"]
                for _ in 0..<25 {  // 2.5 s: well past the timeout for `idle`
                    try talker.send(#"{"op":"ping"}"# + "\n")
                    lines.append(try talker.readLine() ?? "closed")
                    usleep(100_000)
                }
                // Closed without a line: a line answering no request would be out of step for a pooled client.
                lines.append(try idle.readLine() ?? "closed")
                try watcher.send(#"{"op":"ping"}"# + "\n")
                lines.append(try watcher.readLine() ?? "closed")
                return lines
            }
            #expect(outcome.first == #"{"ok":true,"watches":1}"#)
            #expect(outcome[1...25].allSatisfy { $0 == #"{"ok":true}"# }, "the talker: \(outcome[1...25])")
            #expect(outcome[26] == "closed", "the idle connection")
            #expect(outcome[27] == #"{"ok":true}"#, "the watcher")
        }
    }

    @Test func aConnectionWhoseAnswersWaitUnreadIsNotIdle() async throws {
        // Answers the client has not read yet are work in flight: the client is slow, not gone. (The
        // server stops reading it meanwhile, so it sends nothing for longer than the timeout.)
        try await withTestServer(configure: { $0.idleTimeoutSeconds = 0.2 }) { server in
            let reader = try server.rawSocket(receiveBufferSize: 4096)
            let batch = String(repeating: #"{"op":"memberships","user":"nobody-at-all-here"}"# + "\n", count: 20_000)
            var sent = 0
            let bytes = Array(batch.utf8)
            while sent < bytes.count {
                let taken = try reader.sendWithoutBlocking(bytes: Array(bytes[sent...]))
                if taken == 0 { break }
                sent += taken
            }
            try await Task.sleep(for: .milliseconds(800))
            var answers = 0
            while answers < 100, let line = try reader.readLine() {
                #expect(line.contains(#""ok":true"#))
                answers += 1
            }
            #expect(answers == 100)
        }
    }

    @Test(arguments: [1, 4, 256])
    func aPipelinedFloodIsAnsweredCompletelyAndInOrderWhateverTheCapPerTurn(cap: Int) async throws {
        try await withTestServer(eventLoops: 1, configure: { $0.maximumRequestsPerTurn = cap }) { server in
            let flood = try server.rawSocket()
            try flood.send((0..<3000).map { #"{"op":"ping","id":\#($0)}"# + "\n" }.joined())
            // Another client is served while the flood is answered a cap at a time.
            let other = try await server.connect()
            #expect(try await other.send(line: #"{"op":"check","user":"u1"}"#).isOK)
            for index in 0..<3000 {
                #expect(try flood.readLine() == #"{"ok":true,"id":\#(index)}"#)
            }
            // Lines left for the next turn are answered even when the client then closes its side.
            try flood.send((0..<500).map { #"{"op":"ping","id":\#($0)}"# + "\n" }.joined())
            flood.closeSending()
            for index in 0..<500 {
                #expect(try flood.readLine() == #"{"ok":true,"id":\#(index)}"#)
            }
            #expect(try flood.isClosedByServer())
        }
    }

    @Test func invalidLimitsAreRefusedAtStart() async throws {
        for configure in [
            { (configuration: inout ServerConfiguration) in configuration.maximumConnections = 0 },
            { (configuration: inout ServerConfiguration) in configuration.maximumRequestsPerTurn = 0 },
            { (configuration: inout ServerConfiguration) in configuration.idleTimeoutSeconds = -1 },
        ] {
            var configuration = ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0))
            configure(&configuration)
            let server = EntitledServer(store: .init(), configuration: configuration)
            await #expect(throws: ServerError.self) { try await server.start() }
        }
    }

    /// Polls `condition` until it holds, for at most 30 s: the server's count follows a close after the
    /// loop has seen it (generous: on a machine busy with the whole suite the loop may see it late).
    static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(condition())
    }
}

/// Graceful stop: requests already sent are answered before their connection closes.
@Suite struct GracefulStopTests {
    @Test func stoppingAnswersEveryRequestAlreadySentBeforeClosing() async throws {
        // One request a turn: 700 pipelined pings (14 KB, one read) take 700 turns, so the stop begins with
        // all of them read and most unanswered.
        var configuration = ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0), eventLoops: 1)
        configuration.maximumRequestsPerTurn = 1
        let server = EntitledServer(store: .init(), configuration: configuration)
        let port = try #require(try await server.start().first?.port)
        // A generous timeout: on a loaded 2-core machine the stop below may wait for a cooperative thread
        // long after the last answer, and the reader must still be there to see the close.
        let socket = Handoff(try RawSocket(port: port, timeoutSeconds: 120))
        let first = try await onDedicatedThread { () -> String? in
            try socket.value.send((0..<700).map { #"{"op":"ping","id":\#($0)}"# + "\n" }.joined())
            return try socket.value.readLine()
        }
        #expect(first == #"{"ok":true,"id":0}"#)  // the batch was read
        async let stopped: Void = server.stop()
        let answers = try await onDedicatedThread { () -> [String] in
            var lines: [String] = []
            while let line = try socket.value.readLine() { lines.append(line) }
            return lines
        }
        await stopped
        #expect(answers.count == 699)
        #expect(answers.last == #"{"ok":true,"id":699}"#)
    }

    @Test func aZeroTimeoutClosesConnectionsAtOnce() async throws {
        var configuration = ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0), eventLoops: 1)
        configuration.shutdownTimeoutSeconds = 0
        let server = EntitledServer(store: .init(), configuration: configuration)
        let port = try #require(try await server.start().first?.port)
        let socket = Handoff(try RawSocket(port: port, timeoutSeconds: 120, receiveBufferSize: 4096))
        let sent = try await Self.pipelineUntilTheServerStopsReading(socket.value)
        await server.stop()
        let answers = try await onDedicatedThread { try Self.readUntilTheEnd(socket.value) }
        // Closed at once: the answers the server held (more than its 64 KiB high water mark) are dropped.
        #expect(answers.count < sent)
        #expect(answers == Array(0..<answers.count), "answers out of order or missing in the middle")
    }

    @Test func aDrainedConnectionEndsCleanlyEvenWithRequestsLeftUnread() async throws {
        // The client pipelines until the server stops reading it (backpressure), so when the stop begins the
        // server holds unsent answers and the kernel holds requests it never read. Closing such a socket
        // would send a reset and throw away the answers in the kernel's send buffer.
        let configuration = ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0), eventLoops: 1)
        let server = EntitledServer(store: .init(), configuration: configuration)
        let port = try #require(try await server.start().first?.port)
        let socket = Handoff(try RawSocket(port: port, timeoutSeconds: 120, receiveBufferSize: 4096))
        let sent = try await Self.pipelineUntilTheServerStopsReading(socket.value)
        async let stopped: Void = server.stop()
        let answers = try await onDedicatedThread { try Self.readUntilTheEnd(socket.value) }
        await stopped
        #expect(!socket.value.wasReset, "the connection ended with a reset after \(answers.count) answers")
        #expect(answers == Array(0..<answers.count), "answers out of order or missing in the middle")
        #expect(answers.count > 0 && answers.count <= sent)
    }

    /// Sends `{"op":"ping","id":N}` lines, N from 0, without reading, until the socket takes nothing for
    /// half a second: the server stopped reading and the kernel buffers are full. Returns the whole lines
    /// sent, the last perhaps only in part.
    private static func pipelineUntilTheServerStopsReading(_ socket: RawSocket) async throws -> Int {
        var next = 0
        var unsent: ArraySlice<UInt8> = []
        var stalledRounds = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while stalledRounds < 10, ContinuousClock.now < deadline {
            if unsent.isEmpty {
                unsent = ArraySlice((0..<64).map { #"{"op":"ping","id":\#(next + $0)}"# + "\n" }.joined().utf8)
                next += 64
            }
            let taken = try socket.sendWithoutBlocking(bytes: Array(unsent))
            unsent = unsent.dropFirst(taken)
            if taken == 0 {
                stalledRounds += 1
                try await Task.sleep(for: .milliseconds(50))
            } else {
                stalledRounds = 0
            }
        }
        return next
    }

    /// The ids of every answer until the connection ends.
    private static func readUntilTheEnd(_ socket: RawSocket) throws -> [Int] {
        var ids: [Int] = []
        while let line = try socket.readLine() {
            guard let response = try? EntitledResponse(line: line), response.isOK, let id = response["id"]?.intValue else {
                Issue.record("not a ping's answer: \(line)")
                return ids
            }
            ids.append(id)
        }
        return ids
    }
}
