import EntitledClient
import EntitledTestSupport
import Testing

/// `EntitledAsyncConnection` and `EntitledPool` against a real `entitled`, and against scripted servers
/// for the failures a real one does not show on demand.
@Suite struct AsyncClientTests {
    // MARK: - One connection

    @Test func twoHundredConcurrentSendsOnOneConnectionAreEachAnsweredWithTheirOwnAnswer() async throws {
        let server = try RunningEntitled()
        let connection = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    if index.isMultiple(of: 2) {
                        // With an id: the answer must carry it back.
                        let answer = try await connection.send(.check(user: "u\(index)").with(id: index), timeout: .seconds(20))
                        #expect(answer.isOK)
                        #expect(answer["id"] == .number(String(index)))
                        #expect(answer["active"] == .bool(false))
                    } else {
                        // Without one: only the order tells whose answer it is; the membership says it was right.
                        let answer = try await connection.send(.grant(user: "u\(index)", product: "prod_\(index)"), timeout: .seconds(20))
                        #expect(answer.membership?.user == "u\(index)")
                        #expect(answer.membership?.productId == "prod_\(index)")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(connection.isOpen)
        #expect(connection.inFlight == 0)
        let memberships = try await connection.send(.memberships(user: "u7"))
        #expect(memberships.memberships?.map(\.productId) == ["prod_7"])
        await connection.close()
        #expect(!connection.isOpen)
        await #expect(throws: EntitledClientError.closed) { try await connection.send(.ping) }
    }

    @Test func worksOverAUnixSocket() async throws {
        let server = try RunningEntitled(unixSocket: true)
        let connection = try await EntitledAsyncConnection.connect(to: .unixSocket(path: try #require(server.socketPath)))
        #expect(try await connection.send(.ping.with(id: "u")).line == #"{"ok":true,"id":"u"}"#)
        await connection.close()
    }

    @Test func aRawLineIsSentAsGivenAndALineHoldingANewlineIsRefusedWithoutSending() async throws {
        let server = try RunningEntitled()
        let connection = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        #expect(try await connection.send(line: #"{"op":"ping","id":"raw"}"#).line == #"{"ok":true,"id":"raw"}"#)
        await #expect(throws: EntitledClientError.lineContainsNewline) {
            _ = try await connection.send(line: #"{"op":"ping","id":1}"# + "\n" + #"{"op":"ping","id":2}"#)
        }
        // Nothing was written: the next answer is this request's own, on the same open connection.
        #expect(connection.isOpen)
        #expect(try await connection.send(line: #"{"op":"ping","id":3}"#).line == #"{"ok":true,"id":3}"#)
        await connection.close()
    }

    @Test func aServerThatIsDownIsCannotConnectWithTheSystemsReason() async throws {
        let server = try RunningEntitled()
        let port = server.port
        server.stop()
        await #expect(throws: EntitledClientError.cannotConnect(address: .tcp(host: "127.0.0.1", port: port), reason: "connection refused")) {
            _ = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: port))
        }
    }

    @Test func errorAnswersAreReturnedBySendAndThrownAsTheTypedServerErrorByTheConveniences() async throws {
        let server = try RunningEntitled()
        let connection = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        let answer = try await connection.send(.revoke(membership: "mem_0000000000000").with(id: 3))
        #expect(answer.error?.code == .notFound)
        #expect(answer["id"] == .number("3"))
        #expect(connection.isOpen)
        await connection.close()

        let pool = EntitledPool(address: .tcp(host: "127.0.0.1", port: server.port))
        do {
            _ = try await pool.check(user: "u1", entitlement: "gold")
            Issue.record("expected a server error")
        } catch {
            guard case .server(let failure) = error else {
                Issue.record("expected .server, got \(error)")
                return
            }
            #expect(failure.code == .notFound)
            #expect(error.code == "server_error")
        }
        do {
            _ = try await pool.sendExpectingSuccess(.grant(user: "u1", product: "p", duration: "1 month"))
            Issue.record("expected a server error")
        } catch {
            #expect(error.serverFailure?.code == .badRequest)
            #expect(error.serverFailure?.message.contains("duration") == true)
        }
        await pool.close()
    }

    @Test func aTimeoutFailsEveryRequestInFlightAndClosesTheConnection() async throws {
        let fake = try FakeLineServer { line in line.contains(#""ping""#) ? .line(#"{"ok":true}"#) : .silence }
        let address = ServerAddress.tcp(host: "127.0.0.1", port: fake.port)
        let connection = try await EntitledAsyncConnection.connect(to: address)
        #expect(try await connection.send(.ping).isOK)
        let started = ContinuousClock.now
        let results = try await withThrowingTaskGroup(of: Result<EntitledResponse, EntitledClientError>.self) { group in
            func send(_ index: Int, timeout: Duration) {
                group.addTask {
                    do throws(EntitledClientError) {
                        return .success(try await connection.send(.check(user: "u\(index)"), timeout: timeout))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            // Four with a long timeout, in flight before the one with the shortest is sent: on a loaded
            // machine their tasks could otherwise start only after its 300 ms, on a connection closed already.
            for index in 1..<5 { send(index, timeout: .seconds(30)) }
            let deadline = ContinuousClock.now + .seconds(30)
            while fake.receivedLines.count < 5, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(connection.inFlight == 4)
            // The shortest timeout: every request in flight fails with it.
            send(0, timeout: .milliseconds(300))
            var results: [Result<EntitledResponse, EntitledClientError>] = []
            for try await result in group { results.append(result) }
            return results
        }
        // Well before the others' own 30 s (a loaded machine may hold this task for seconds).
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(results.count == 5)
        for result in results {
            #expect(throws: EntitledClientError.timedOut(address: address, seconds: 0.3)) { try result.get() }
        }
        #expect(!connection.isOpen)
        #expect(connection.closeReason == .timedOut(address: address, seconds: 0.3))
        await #expect(throws: EntitledClientError.connectionClosed(address: address)) { try await connection.send(.ping) }
    }

    @Test func aDroppedConnectionFailsEveryRequestInFlight() async throws {
        let fake = try FakeLineServer { line in line.contains("boom") ? .close : .silence }
        let address = ServerAddress.tcp(host: "127.0.0.1", port: fake.port)
        let connection = try await EntitledAsyncConnection.connect(to: address)
        let waiting = (0..<3).map { index in
            Task {
                try await connection.send(.check(user: "u\(index)"), timeout: .seconds(30))
            }
        }
        // Pipelined: all three are written although none was answered.
        while fake.receivedLines.count < 3 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(connection.inFlight == 3)
        await #expect(throws: EntitledClientError.connectionClosed(address: address)) {
            try await connection.send(.check(user: "boom"), timeout: .seconds(30))
        }
        for task in waiting {
            await #expect(throws: EntitledClientError.connectionClosed(address: address)) { try await task.value }
        }
        #expect(!connection.isOpen)
    }

    @Test func anAnswerWithAnotherIdMeansTheStreamIsOutOfStepAndClosesTheConnection() async throws {
        let fake = try FakeLineServer { _ in .line(#"{"ok":true,"id":99}"#) }
        let connection = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: fake.port))
        do {
            _ = try await connection.send(.ping.with(id: 1))
            Issue.record("expected malformedResponse")
        } catch {
            guard case .malformedResponse = error else {
                Issue.record("expected malformedResponse, got \(error)")
                return
            }
        }
        #expect(!connection.isOpen)
    }

    @Test func aPushedLineIsNeverTakenForAnAnswer() async throws {
        let push = #"{"push":"access","cause":"grant","sequence":1,"membership":{"id":"mem_1"}}"#
        let fake = try FakeLineServer { _ in .line(push + "\n" + #"{"ok":true,"id":1}"#) }
        let connection = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: fake.port))
        let answer = try await connection.send(.ping.with(id: 1))
        #expect(answer.line == #"{"ok":true,"id":1}"#)
        var pushes = connection.pushes.makeAsyncIterator()
        #expect(await pushes.next()?.line == push)
        await connection.close()
    }

    // MARK: - The pool

    @Test func thePoolSpreadsConcurrentRequestsOverItsConnections() async throws {
        let server = try RunningEntitled()
        let pool = EntitledPool(address: .tcp(host: "127.0.0.1", port: server.port), configuration: .init(connections: 2))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask {
                    let answer = try await pool.send(.ping.with(id: index))
                    #expect(answer["id"] == .number(String(index)))
                }
            }
            try await group.waitForAll()
        }
        let status = await pool.connectionStatus
        #expect(status.count == 2)
        #expect(status.allSatisfy { $0.isOpen && $0.sent > 0 && $0.inFlight == 0 && $0.connects == 1 })
        #expect(status.map(\.sent).reduce(0, +) == 100)
        await pool.close()
        await #expect(throws: EntitledClientError.closed) { try await pool.send(.ping) }
    }

    @Test func thePoolFailsRequestsDuringAnOutageAndReconnectsAfterTheRestart() async throws {
        let server = try RunningEntitled()
        let address = ServerAddress.tcp(host: "127.0.0.1", port: server.port)
        let pool = EntitledPool(
            address: address, configuration: .init(connections: 2, initialBackoff: .milliseconds(20), maximumBackoff: .milliseconds(100))
        )
        #expect(try await pool.check(user: "u1") == .inactive)
        _ = try await pool.sendExpectingSuccess(.grant(user: "u1", product: "prod_a"))

        server.stop()
        for _ in 0..<3 {
            do {
                _ = try await pool.send(.ping)
                Issue.record("a request during the outage must fail")
            } catch {
                #expect(["cannot_connect", "connection_closed", "connection_failed"].contains(error.code), "\(error)")
            }
        }
        #expect(await pool.connectionStatus.allSatisfy { !$0.isOpen })

        try server.restart()
        // A connect refused during the outage may be taken in by the pool only now, on a loaded machine, and
        // starts a backoff of up to 100 ms from the moment it is: until then a request may still fail at once
        // with that refusal. So ask until one is answered, rather than trusting a fixed pause.
        let deadline = ContinuousClock.now + .seconds(10)
        var answered = false
        while !answered, ContinuousClock.now < deadline {
            do {
                answered = try await pool.send(.ping).isOK
            } catch {
                #expect(error.code == "cannot_connect", "\(error)")
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        #expect(answered, "the pool never reconnected after the restart")
        #expect(try await pool.check(user: "u1", product: "prod_a") == .active(until: nil))
        #expect(try await pool.send(.ping.with(id: "after")).isOK)
        await pool.close()
    }

    @Test func watchYieldsPushesOfChangesMadeElsewhereAndEndsCleanlyWhenTheConsumerIsCancelled() async throws {
        let server = try RunningEntitled()
        let pool = EntitledPool(address: .tcp(host: "127.0.0.1", port: server.port))
        let collected = Collected()
        let stream = pool.watch(user: "w1")
        let consumer = Task { () -> String in
            do {
                for try await push in stream { await collected.add(push) }
                return "finished"
            } catch {
                return "failed: \(error)"
            }
        }
        // The watch is in place once a grant is pushed; grant until one is (the first may come too early).
        // Within a deadline, not a count of grants: on a loaded machine the watch's task may be held for seconds.
        let deadline = ContinuousClock.now + .seconds(30)
        while await collected.pushes.isEmpty, ContinuousClock.now < deadline {
            _ = try await pool.sendExpectingSuccess(.grant(user: "w1", product: "prod_w"))
            for _ in 0..<10 where await collected.pushes.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        }
        let first = try #require(await collected.pushes.first)
        #expect(first.kind == "access")
        #expect(first.cause == "grant")
        #expect(first.membership?.user == "w1")
        #expect(first.membership?.productId == "prod_w")
        // Another subject's change is not pushed.
        _ = try await pool.sendExpectingSuccess(.grant(user: "someone_else", product: "prod_w"))

        consumer.cancel()
        #expect(await consumer.value == "finished")
        #expect(await collected.pushes.allSatisfy { $0.membership?.user == "w1" })
        await pool.close()
    }

    @Test(.timeLimit(.minutes(2))) func aCancelledWatchSendsUnwatchAndClosesItsConnection() async throws {
        // The watch's answer is followed by a push, which the consumer receiving shows the watch answered.
        let push = #"{"push":"access","cause":"grant","sequence":1,"membership":{"id":"mem_1"}}"#
        let fake = try FakeLineServer { line in
            line.contains(#""unwatch""#) ? .line(#"{"ok":true,"watches":0}"#) : .line(#"{"ok":true,"watches":1}"# + "\n" + push)
        }
        let pool = EntitledPool(address: .tcp(host: "127.0.0.1", port: fake.port))
        let stream = pool.watch(user: "w1")
        let (firstPush, signal) = AsyncStream.makeStream(of: Void.self)
        let consumer = Task { () -> String in
            do {
                for try await _ in stream { signal.yield() }
                return "finished"
            } catch {
                return "failed: \(error)"
            }
        }
        // Wait until the watch was answered (its push came through): a consumer that stops while the watch
        // is being sent only closes. Awaited, not timed: a wall-clock deadline fails when the whole pool of
        // test tasks is held past it on a loaded machine, the consumer included (the suite's time limit
        // still ends a push that never comes).
        var pushes = firstPush.makeAsyncIterator()
        #expect(await pushes.next() != nil, "the watch's push never reached the consumer")
        consumer.cancel()
        #expect(await consumer.value == "finished")
        let deadline = ContinuousClock.now + .seconds(30)
        while fake.receivedLines.count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(fake.receivedLines == [#"{"op":"watch","user":"w1"}"#, #"{"op":"unwatch","user":"w1"}"#])
        #expect(fake.acceptedConnections == 1)
    }

    @Test func aRefusedWatchFailsTheStreamWithTheServerError() async throws {
        let server = try RunningEntitled()
        let pool = EntitledPool(address: .tcp(host: "127.0.0.1", port: server.port))
        do {
            for try await _ in pool.watch() { Issue.record("no push expected") }
            Issue.record("expected a server error")
        } catch let error as EntitledClientError {
            guard case .server(let failure) = error else {
                Issue.record("expected .server, got \(error)")
                return
            }
            #expect(failure.code == .badRequest)
        }
    }

    @Test func aWatchEndsWithTheConnectionErrorWhenTheServerStops() async throws {
        let server = try RunningEntitled()
        let address = ServerAddress.tcp(host: "127.0.0.1", port: server.port)
        let pool = EntitledPool(address: address)
        let stream = pool.watch(device: "d1")
        let consumer = Task { () -> String in
            do {
                for try await _ in stream {}
                return "finished"
            } catch {
                return "failed: \(error)"
            }
        }
        // Let the watch open (its push stream ends with the connection either way).
        try await Task.sleep(for: .milliseconds(200))
        server.stop()
        let outcome = await consumer.value
        #expect(outcome.hasPrefix("failed:"), "\(outcome)")
    }
}

/// The pushes a consumer task received, read by the test.
private actor Collected {
    private(set) var pushes: [EntitledPush] = []

    func add(_ push: EntitledPush) {
        pushes.append(push)
    }
}

extension EntitledRequest {
    fileprivate func with(id: Int) -> EntitledRequest {
        var request = self
        request.fields.append((key: "id", value: .number(String(id))))
        return request
    }

    fileprivate func with(id: String) -> EntitledRequest {
        var request = self
        request.fields.append((key: "id", value: .string(id)))
        return request
    }
}

extension EntitledClientError {
    fileprivate var serverFailure: ServerFailure? {
        if case .server(let failure) = self { return failure }
        return nil
    }
}

extension AsyncClientTests {
    /// The README's example, as written there (but for the port): a Swift service checking access.
    @Test func theReadmesSwiftExampleChecksAccess() async throws {
        let server = try RunningEntitled()
        defer { server.stop() }
        let setup = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        _ = try await setup.send(.define(entitlement: "pro", products: ["prod_pro"]), timeout: .seconds(10))
        _ = try await setup.send(.grant(user: "alice", product: "prod_pro"), timeout: .seconds(10))

        var printed: [String] = []
        // --- README ---
        let entitled = EntitledPool(address: .tcp(host: "127.0.0.1", port: server.port))
        switch try await entitled.check(user: "alice", entitlement: "pro") {
        case .active(let until): printed.append("pro until \(until ?? "forever")")
        case .inactive: printed.append("no access")
        }
        // --- end ---
        await entitled.close()
        #expect(printed == ["pro until forever"])
    }
}
