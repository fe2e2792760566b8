import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Paged reads (protocol version 4): `allPages(of:)`, `allMemberships` and `allHistory` follow `next` to
/// the last page, on the synchronous connection, the async one and the pool; an error answer such as
/// `over_limit` ends the walk and is never sent again. Against scripted servers (which record the lines
/// they get) and real ones.
@Suite struct PagingTests {
    /// A membership object of the protocol with the id `id`.
    static func membership(_ id: String) -> String {
        #"{"id":"\#(id)","productId":"prod","user":"u1","status":"active","isActive":true,"createdAt":"2026-11-22T00:31:45.833Z","expiresAt":null,"source":"manual"}"#
    }

    /// A scripted server that lists memberships `mem_9`...`mem_1` (newest first) in pages of the request's
    /// `limit`, after its `after`, as `entitled` does.
    static func pagingServer() throws -> FakeLineServer {
        try FakeLineServer { line in
            guard let request = try? JSONValue(parsing: line) else { return .close }
            let ids = (1...9).reversed().map { "mem_\($0)" }
            let start = request["after"]?.stringValue.flatMap { ids.firstIndex(of: $0) }.map { $0 + 1 } ?? 0
            let limit = request["limit"]?.intValue ?? 100
            let page = ids[start..<min(ids.count, start + limit)]
            let next = start + limit < ids.count ? #","next":"\#(page.last ?? "")""# : ""
            return .line(#"{"ok":true,"memberships":["# + page.map(membership).joined(separator: ",") + "]" + next + "}")
        }
    }

    /// Gives `user` `count` memberships, pipelined in batches on a plain socket (its log syncs are
    /// grouped), on a thread of its own: cheap for the client, so that the other suites running beside
    /// this one are not slowed down.
    static func grant(_ count: Int, to user: String, port: Int) async throws {
        let granted = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Result { try grantBlocking(count, to: user, port: port) }) }
        }
        #expect(try granted.get() == count)
    }

    /// `grant(_:to:port:)` on the calling thread; returns how many grants were answered ok.
    private static func grantBlocking(_ count: Int, to user: String, port: Int) throws -> Int {
        let socket = try LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 60)
        defer { close(socket) }
        let line = Array((EntitledRequest.grant(user: user, product: "prod", duration: "30d").jsonLine + "\n").utf8)
        let okPrefix = Array(#"{"ok":true"#.utf8)
        var granted = 0
        var remaining = count
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while remaining > 0 {
            let batch = min(remaining, 1000)
            let bytes = Array([[UInt8]](repeating: line, count: batch).joined())
            var sent = 0
            while sent < bytes.count {
                let written = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { throw EntitledClientError.connectionFailed(address: .tcp(host: "127.0.0.1", port: port), reason: "send") }
                sent += written
            }
            var answered = 0
            while answered < batch {
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    if buffer.starts(with: okPrefix) { granted += 1 }
                    buffer.removeSubrange(...newline)
                    answered += 1
                }
                guard answered < batch else { break }
                let read = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                guard read > 0 else { throw EntitledClientError.connectionClosed(address: .tcp(host: "127.0.0.1", port: port)) }
                buffer.append(contentsOf: chunk[..<read])
            }
            remaining -= batch
        }
        return granted
    }

    // MARK: against scripted servers

    @Test func theWalkAsksForPagesOfAThousandAndPassesEachNextBackKeepingTheOtherFields() throws {
        let server = try Self.pagingServer()
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port))
        let all = try connection.allMemberships(user: "u1", minSeq: 4)
        #expect(all.map(\.id) == (1...9).reversed().map { "mem_\($0)" })
        #expect(server.receivedLines == [#"{"op":"memberships","user":"u1","minSeq":4,"limit":1000}"#])

        // A limit the caller gave is kept, and each page starts after the last.
        let pages = try connection.allPages(of: .memberships(user: "u1", limit: 4))
        #expect(pages.map { $0.memberships?.count } == [4, 4, 1])
        #expect(pages.map(\.next) == ["mem_6", "mem_2", nil])
        #expect(
            server.receivedLines.dropFirst() == [
                #"{"op":"memberships","user":"u1","limit":4}"#, #"{"op":"memberships","user":"u1","limit":4,"after":"mem_6"}"#,
                #"{"op":"memberships","user":"u1","limit":4,"after":"mem_2"}"#,
            ]
        )
    }

    @Test func theAsyncConnectionAndThePoolWalkThePagesAlike() async throws {
        let server = try Self.pagingServer()
        let address = ServerAddress.tcp(host: "127.0.0.1", port: server.port)
        let connection = try await EntitledAsyncConnection.connect(to: address)
        let pages = try await connection.allPages(of: .memberships(transactionId: "t1", limit: 5))
        #expect(pages.flatMap { $0.memberships ?? [] }.count == 9)
        #expect(pages.count == 2)
        #expect(try await connection.allMemberships(originalTransactionId: "o1").count == 9)
        await connection.close()

        let pool = EntitledPool(address: address)
        let fromPool = try await pool.allPages(of: .memberships(device: "d1", limit: 2))
        #expect(fromPool.map { $0.memberships?.count } == [2, 2, 2, 2, 1])
        #expect(try await pool.allMemberships(user: "u1").map(\.id).first == "mem_9")
        await pool.close()
        #expect(server.receivedLines.last == #"{"op":"memberships","user":"u1","limit":1000}"#)
    }

    @Test func overLimitEndsTheWalkAsAServerErrorAndIsNeverSentAgain() async throws {
        let refusal =
            #"{"ok":false,"error":{"code":"over_limit","message":"user \"whale\" has 10001 memberships, more than the 10000 that history goes through one by one"}}"#
        let nodes = try (0..<2).map { _ in try FakeLineServer { _ in .line(refusal) } }
        let pool = EntitledPool(addresses: nodes.map { .tcp(host: "127.0.0.1", port: $0.port) })
        do {
            _ = try await pool.allHistory(user: "whale")
            Issue.record("expected over_limit")
        } catch {
            guard case .server(let failure) = error else {
                Issue.record("expected .server, got \(error)")
                return
            }
            #expect(failure.code == .overLimit)
            #expect(failure.message.contains("10001 memberships"))
        }
        // `send` returns the answer as it came; neither sends the request twice, on any node.
        #expect(try await pool.send(.customer(user: "whale")).error?.code == .overLimit)
        #expect(nodes.map(\.receivedLines.count).reduce(0, +) == 2)
        await pool.close()

        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: nodes[0].port))
        #expect(throws: EntitledClientError.self) { try connection.allMemberships(user: "whale", at: "2026-01-01T00:00:00Z") }
    }

    /// `body` throws `malformedResponse` with `reason`.
    private func expectMalformed(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws(EntitledClientError) -> Void) {
        do {
            try body()
            Issue.record("expected malformedResponse", sourceLocation: sourceLocation)
        } catch {
            guard case .malformedResponse(_, let given) = error else {
                Issue.record("expected malformedResponse, got \(error)", sourceLocation: sourceLocation)
                return
            }
            #expect(given == reason, sourceLocation: sourceLocation)
        }
    }

    @Test func aWalkThatWouldNeverEndOrAnAnswerWithoutItsListIsMalformed() throws {
        let looping = try FakeLineServer { _ in .line(#"{"ok":true,"memberships":[],"next":"mem_1"}"#) }
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: looping.port))
        expectMalformed(#"the server gave the "next" mem_1 twice; following it would never end"#) { () throws(EntitledClientError) in
            _ = try connection.allMemberships(user: "u1")
        }
        #expect(looping.receivedLines.count == 2)

        let listless = try FakeLineServer { _ in .line(#"{"ok":true,"next":"1.2.-.3"}"#) }
        let other = EntitledConnection(address: .tcp(host: "127.0.0.1", port: listless.port))
        expectMalformed(#"an answer to history must have an array "history""#) { () throws(EntitledClientError) in
            _ = try other.allHistory(entitlement: "pro")
        }
    }

    // MARK: against a real server

    @Test func pagesOfARealServerJoinUpToTheWholeListingNewestFirst() throws {
        let server = try RunningEntitled()
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port))
        #expect(try connection.send(.hello)["protocol"]?.intValue == 5)
        for index in 0..<25 { #expect(try connection.send(.grant(user: "u1", product: "prod_\(index)")).isOK) }
        #expect(try connection.send(.grant(user: "u1", product: "prod_store", transactionId: "t2", originalTransactionId: "t1")).isOK)

        let whole = try #require(try connection.send(.memberships(user: "u1")).memberships)
        #expect(whole.count == 26)
        #expect(whole.first?.productId == "prod_store")
        let pages = try connection.allPages(of: .memberships(user: "u1", limit: 7))
        #expect(pages.map { $0.memberships?.count } == [7, 7, 7, 5])
        #expect(pages.dropLast().allSatisfy { $0.next == $0.memberships?.last?.id })
        #expect(pages.last?.next == nil)
        #expect(pages.flatMap { $0.memberships ?? [] } == whole)
        #expect(try connection.allMemberships(user: "u1") == whole)
        #expect(try connection.allMemberships(transactionId: "t2").map(\.productId) == ["prod_store"])
        #expect(try connection.allMemberships(originalTransactionId: "t1").map(\.productId) == ["prod_store"])

        let trail = try #require(try connection.send(.history(user: "u1")).history)
        #expect(trail.count == 26)
        let historyPages = try connection.allPages(of: .history(user: "u1", limit: 10))
        #expect(historyPages.map { $0.history?.count } == [10, 10, 6])
        #expect(historyPages.flatMap { $0.history ?? [] } == trail)
        #expect(try connection.allHistory(user: "u1") == trail)
    }

    @Test func theAsyncConnectionAndThePoolListMoreThanAPageOfARealServer() async throws {
        let server = try RunningEntitled(arguments: ["--fsync", "no"])
        try await Self.grant(1500, to: "u1", port: server.port)
        let address = ServerAddress.tcp(host: "127.0.0.1", port: server.port)

        let connection = try await EntitledAsyncConnection.connect(to: address)
        let pages = try await connection.allPages(of: .memberships(user: "u1"))
        #expect(pages.map { $0.memberships?.count } == [1000, 500])
        let all = try await connection.allMemberships(user: "u1")
        #expect(all.count == 1500)
        #expect(Set(all.map(\.id)).count == 1500)
        #expect(all == pages.flatMap { $0.memberships ?? [] })
        await connection.close()

        let pool = EntitledPool(address: address)
        #expect(try await pool.allMemberships(user: "u1") == all)
        let history = try await pool.allHistory(user: "u1")
        #expect(history.count == 1500)
        #expect(history.map { $0.membership?.id ?? "" } == all.map(\.id))
        await pool.close()
    }

    @Test func aSubjectPastTheLimitIsRefusedOverLimitOnceButListedInFull() async throws {
        let server = try RunningEntitled(arguments: ["--fsync", "no"])
        try await Self.grant(10_001, to: "whale", port: server.port)
        let pool = EntitledPool(address: .tcp(host: "127.0.0.1", port: server.port), configuration: .init(connections: 1))
        #expect(try await pool.allMemberships(user: "whale").count == 10_001)
        let sentBefore = await pool.connectionStatus.map(\.sent).reduce(0, +)
        for request in [EntitledRequest.customer(user: "whale"), .history(user: "whale"), .memberships(user: "whale", at: "2026-01-01T00:00:00Z")] {
            let answer = try await pool.send(request)
            #expect(answer.error?.code == .overLimit, "\(answer.line)")
        }
        do {
            _ = try await pool.allHistory(user: "whale")
            Issue.record("expected over_limit")
        } catch {
            guard case .server(let failure) = error else {
                Issue.record("expected .server, got \(error)")
                return
            }
            #expect(failure.code == .overLimit)
        }
        // Four refusals, four requests: none was sent again.
        #expect(await pool.connectionStatus.map(\.sent).reduce(0, +) == sentBefore + 4)
        await pool.close()
    }
}
