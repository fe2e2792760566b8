import EntitledClient
import EntitledTestSupport
import Foundation
import Synchronization
import Testing

/// `EntitledPool` with several addresses (the nodes of one cluster): connections spread over the nodes,
/// a node that goes away is replaced by the others, and only reads are ever sent twice. Two standalone
/// servers stand in for two nodes: what is tested is the client, not the cluster.
@Suite struct PoolNodesTests {
    @Test func thePoolSpreadsItsConnectionsOverEveryNode() async throws {
        let first = try RunningEntitled()
        let second = try RunningEntitled()
        let addresses = [first, second].map { ServerAddress.tcp(host: "127.0.0.1", port: $0.port) }
        let pool = EntitledPool(addresses: addresses, configuration: .init(connections: 4))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let ping = EntitledRequest(op: "ping", fields: [(key: "id", value: .number(String(index)))])
                    let answer = try await pool.send(ping)
                    #expect(answer["id"] == .number(String(index)))
                }
            }
            try await group.waitForAll()
        }
        let status = await pool.connectionStatus
        #expect(status.allSatisfy { $0.isOpen })
        // Connection i goes to node (s + i) mod 2: two on each.
        #expect(status.filter { $0.address == addresses[0] }.count == 2)
        #expect(status.filter { $0.address == addresses[1] }.count == 2)
        for server in [first, second] {
            let connection = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: server.port))
            let stats = try await connection.send(EntitledRequest(op: "stats"))
            let pings = stats["requests"]?["byOp"]?["ping"]?.intValue ?? 0
            #expect(pings > 0, "\(stats.line)")
            await connection.close()
        }
        await pool.close()
    }

    @Test func whenANodeIsKilledRequestsKeepSucceedingThroughTheOther() async throws {
        let first = try RunningEntitled()
        let second = try RunningEntitled()
        let addresses = [first, second].map { ServerAddress.tcp(host: "127.0.0.1", port: $0.port) }
        let pool = EntitledPool(
            addresses: addresses,
            configuration: .init(connections: 2, initialBackoff: .milliseconds(20), maximumBackoff: .milliseconds(200))
        )
        for _ in 0..<20 {
            let access = try await pool.check(user: "alice")
            #expect(access == .inactive)
        }
        try await openEveryConnection(of: pool)
        #expect(Set(await pool.connectionStatus.compactMap(\.address)) == Set(addresses))

        first.kill()
        // Every read succeeds: one lost with the killed node's connection is sent again to the other.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask {
                    let access = try await pool.check(user: "u\(index)")
                    #expect(access == .inactive)
                }
            }
            try await group.waitForAll()
        }
        // A write may fail once, if it went out on the dead connection; sent again with its idempotency key
        // it succeeds, and only once.
        for index in 0..<20 {
            let grant = EntitledRequest.grant(user: "bob", product: "prod_\(index)", idempotencyKey: "key-\(index)")
            var answer: EntitledResponse?
            for _ in 0..<3 where answer == nil {
                do {
                    answer = try await pool.sendExpectingSuccess(grant)
                } catch {
                    #expect(["connection_closed", "connection_failed", "cannot_connect"].contains(error.code), "\(error)")
                }
            }
            #expect(answer?.membership?.productId == "prod_\(index)")
        }
        // Every slot ends on the live node. A slot whose connection died may still be connecting when the
        // last grant is answered (the grants went out on the other slot), so give it the requests that
        // make it connect, for a bounded time, rather than reading its state at one instant.
        let settleBy = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < settleBy, await !pool.connectionStatus.allSatisfy({ $0.address == addresses[1] }) {
            _ = try await pool.check(user: "settle")
            try await Task.sleep(for: .milliseconds(20))
        }
        let settled = await pool.connectionStatus
        #expect(settled.allSatisfy { $0.address == addresses[1] }, "\(settled)")
        let memberships = try await pool.sendExpectingSuccess(.memberships(user: "bob")).memberships ?? []
        #expect(memberships.count == 20)
        await pool.close()
    }

    @Test func aReadLostWithItsConnectionIsSentToAnotherNodeAndAWriteIsNot() async throws {
        let real = try RunningEntitled()
        // A node that answers pings and drops the connection on any other request, unanswered.
        let dropping = try FakeLineServer { line in line.contains(#""op":"ping""#) ? .line(#"{"ok":true}"#) : .close }
        let addresses: [ServerAddress] = [.tcp(host: "127.0.0.1", port: dropping.port), .tcp(host: "127.0.0.1", port: real.port)]
        let pool = EntitledPool(addresses: addresses, configuration: .init(connections: 2))
        try await openEveryConnection(of: pool)

        let reads = try await withThrowingTaskGroup(of: EntitledAccess.self, returning: [EntitledAccess].self) { group in
            for index in 0..<20 { group.addTask { try await pool.check(user: "reader\(index)") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(reads == Array(repeating: .inactive, count: 20))
        // Some of them did go to the dropping node first.
        #expect(dropping.receivedLines.contains { $0.contains(#""op":"check""#) })

        try await openEveryConnection(of: pool)
        let writes = await withTaskGroup(of: Result<EntitledResponse, EntitledClientError>.self) { group in
            for index in 0..<20 {
                group.addTask {
                    do throws(EntitledClientError) {
                        return .success(try await pool.sendExpectingSuccess(.grant(user: "writer", product: "prod_\(index)")))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let failed = writes.compactMap { result -> EntitledClientError? in
            if case .failure(let error) = result { return error }
            return nil
        }
        #expect(!failed.isEmpty, "some grants went out on the dropping node's connection")
        #expect(failed.allSatisfy { ["connection_closed", "connection_failed"].contains($0.code) }, "\(failed)")
        // Each grant reached the real node at most once: the failed ones were not sent there again.
        let memberships = try await pool.sendExpectingSuccess(.memberships(user: "writer")).memberships ?? []
        #expect(memberships.count == writes.count - failed.count)
        #expect(Set(memberships.map(\.productId)).count == memberships.count)
        await pool.close()
    }

    @Test func whenEveryNodeIsDownTheErrorNamesOneOfThem() async throws {
        let first = try RunningEntitled()
        let second = try RunningEntitled()
        let addresses = [first, second].map { ServerAddress.tcp(host: "127.0.0.1", port: $0.port) }
        first.stop()
        second.stop()
        // Hold the two ports, bound and not listening (a connect there is refused): otherwise a server
        // another test starts meanwhile may be given a freed port, and answer (seen in a full run).
        let held = [first.port, second.port].map(holdPort)
        defer { for descriptor in held where descriptor >= 0 { close(descriptor) } }
        let pool = EntitledPool(addresses: addresses)
        do {
            _ = try await pool.send(.ping)
            Issue.record("no node is up: the request must fail")
        } catch {
            guard case .cannotConnect(let address, _) = error else {
                Issue.record("expected cannotConnect, got \(error)")
                return
            }
            #expect(addresses.contains(address))
        }
        await pool.close()
    }

    @Test func aWatchGoesToANodeThatAcceptsIt() async throws {
        let up = try RunningEntitled()
        let down = try RunningEntitled()
        let addresses = [down, up].map { ServerAddress.tcp(host: "127.0.0.1", port: $0.port) }
        down.stop()
        let pool = EntitledPool(addresses: addresses)
        let pushes = pool.watch(user: "carol")
        let received = Mutex<EntitledPush?>(nil)
        let reader = Task {
            for try await push in pushes {
                received.withLock { $0 = push }
                return
            }
        }
        // Only the node that is up can carry the watch. It is registered once its connection is open:
        // grant there until a push comes (within a deadline, not a count: the watch's task may be held
        // for seconds on a loaded machine).
        let writer = try await EntitledAsyncConnection.connect(to: addresses[1])
        let deadline = ContinuousClock.now + .seconds(30)
        var index = 0
        while received.withLock({ $0 == nil }), ContinuousClock.now < deadline {
            _ = try await writer.send(.grant(user: "carol", product: "prod_\(index)"))
            index += 1
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(received.withLock { $0 != nil }, "no push came through the node that is up")
        if received.withLock({ $0 == nil }) { reader.cancel() }  // fails the checks, rather than hanging
        try? await reader.value
        #expect(received.withLock { $0?.line.contains(#""user":"carol""#) } == true)
        await writer.close()
        await pool.close()
    }

    @Test func aWatchPassesOverANodeThatClosesTheConnectionBeforeAnsweringIt() async throws {
        let real = try RunningEntitled()
        // As a node that is stopping does: it accepts the connection and closes it, the watch unanswered.
        let dropping = try FakeLineServer { line in line.contains(#""op":"ping""#) ? .line(#"{"ok":true}"#) : .close }
        let addresses: [ServerAddress] = [.tcp(host: "127.0.0.1", port: dropping.port), .tcp(host: "127.0.0.1", port: real.port)]
        let pool = EntitledPool(addresses: addresses)
        // Each watch starts at a node picked at random: of 16, all but one in 65,536 runs try the dropping
        // node first for at least one.
        let users = (0..<16).map { "watcher\($0)" }
        let received = PushesByUser()
        let readers = users.map { user in
            let pushes = pool.watch(user: user)
            return Task {
                for try await push in pushes {
                    received.lines.withLock { $0[user] = push.line }
                    return
                }
            }
        }
        let writer = try await EntitledAsyncConnection.connect(to: addresses[1])
        // Within a deadline, not a count of rounds: the watches' tasks may be held for seconds on a loaded machine.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let waiting = received.lines.withLock { received in users.filter { received[$0] == nil } }
            if waiting.isEmpty { break }
            for user in waiting { _ = try await writer.send(.grant(user: user, product: "pro")) }
            try await Task.sleep(for: .milliseconds(20))
        }
        // A watch that got nothing by the deadline fails the checks below rather than hanging the test.
        for (user, reader) in zip(users, readers) where received.lines.withLock({ $0[user] == nil }) { reader.cancel() }
        for reader in readers { try? await reader.value }
        let lines = received.lines.withLock { $0 }
        for user in users { #expect(lines[user]?.contains(#""user":"\#(user)""#) == true, "\(user): \(lines[user] ?? "no push")") }
        #expect(dropping.receivedLines.contains { $0.contains(#""op":"watch""#) }, "some watches tried the dropping node first")
        await writer.close()
        await pool.close()
    }

    /// Pings until every connection of the pool is open (pings are answered by the dropping node too).
    private func openEveryConnection(of pool: EntitledPool) async throws {
        for _ in 0..<200 {
            if await pool.connectionStatus.allSatisfy({ $0.isOpen }) { return }
            _ = try await pool.send(.ping)
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("the pool's connections did not all open")
    }
}

/// The first push each watching user got, filled in by the watches' tasks.
private final class PushesByUser: Sendable {
    let lines = Mutex<[String: String]>([:])
}

/// A TCP socket bound to 127.0.0.1:`port` without listening, or -1 when the port is taken already.
private func holdPort(_ port: Int) -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    if bound != 0 {
        close(descriptor)
        return -1
    }
    return descriptor
}
