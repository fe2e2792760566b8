import EntitledClient
import EntitledTestSupport
import Testing

/// `EntitledConnection` against a real `entitled` and against scripted misbehaving servers.
@Suite struct EntitledConnectionTests {
    @Test func typedRequestsGetParsedResponsesFromARealServer() throws {
        let server = try RunningEntitled()
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port))
        let define = try connection.send(.define(entitlement: "pro", products: ["prod_pro"]))
        #expect(define.isOK)
        let grant = try connection.send(.grant(device: "d1", product: "prod_pro", source: "app_store", duration: "30d"))
        let membership = try #require(grant.membership)
        #expect(membership.productId == "prod_pro")
        #expect(membership.device == "d1")
        #expect(membership.user == nil)
        #expect(membership.isActive)
        #expect(membership.source == "app_store")
        let check = try connection.send(.check(device: "d1", entitlement: "pro"))
        #expect(check["active"]?.boolValue == true)
        #expect(check["expiresAt"]?.stringValue == membership.expiresAt)
        let revoke = try connection.send(.revoke(membership: membership.id, reason: "refund"))
        #expect(revoke.membership?.status == "revoked")
        #expect(revoke.membership?.reason == "refund")
        let missing = try connection.send(.revoke(membership: "mem_0000000000000"))
        #expect(!missing.isOK)
        #expect(missing.error?.code == .notFound)
    }

    @Test func writesAnswerTheirSequenceAndReadsTakeItAsMinSeq() throws {
        let server = try RunningEntitled()
        let writer = EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port))
        let reader = EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port))
        let define = try writer.send(.define(entitlement: "pro", products: ["prod_pro"]))
        #expect(define.sequence == 1)
        let grant = try writer.send(.grant(user: "u1", product: "prod_pro"))
        let sequence = try #require(grant.sequence)
        #expect(sequence == 2)
        let claim = try writer.send(.claim(device: "d1", user: "u1"))
        #expect(claim.sequence == 2, "a claim that moved nothing answers the newest change it saw")
        #expect(try reader.send(.check(user: "u1", entitlement: "pro", minSeq: sequence))["active"]?.boolValue == true)
        #expect(try reader.send(.memberships(user: "u1", minSeq: sequence)).memberships?.count == 1)
        #expect(try reader.send(.customer(user: "u1", minSeq: sequence)).customer != nil)
        #expect(try reader.send(.check(user: "u1")).sequence == nil, "reads carry no seq")
        #expect(EntitledRequest.check(user: "u1", minSeq: 7).jsonLine == #"{"op":"check","user":"u1","minSeq":7}"#)
    }

    @Test func worksOverAUnixSocket() throws {
        let server = try RunningEntitled(unixSocket: true)
        let connection = EntitledConnection(address: .unixSocket(path: try #require(server.socketPath)))
        #expect(try connection.send(.ping).isOK)
    }

    @Test func aServerThatIsDownIsCannotConnectWithTheSystemsReason() throws {
        let server = try RunningEntitled()
        let port = server.port
        server.stop()
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: port))
        #expect(throws: EntitledClientError.cannotConnect(address: .tcp(host: "127.0.0.1", port: port), reason: "connection refused")) {
            try connection.send(.ping)
        }
        #expect(!connection.isConnected)
    }

    @Test func anUnknownHostNameIsCannotConnect() throws {
        let connection = EntitledConnection(address: .tcp(host: "no-such-host.invalid", port: 7117), timeout: 5)
        do {
            _ = try connection.send(.ping)
            Issue.record("expected cannotConnect")
        } catch {
            guard case .cannotConnect(_, let reason) = error else {
                Issue.record("expected cannotConnect, got \(error)")
                return
            }
            #expect(!reason.isEmpty)
        }
    }

    @Test func theNextRequestReconnectsAfterTheServerRestarted() throws {
        let server = try RunningEntitled()
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port))
        #expect(try connection.send(.grant(user: "u1", product: "prod_a")).isOK)
        #expect(connection.isConnected)
        try server.restart()
        #expect(!connection.isConnected)
        let show = try connection.send(.memberships(user: "u1"))
        #expect(show.memberships?.map(\.productId) == ["prod_a"])
    }

    @Test func aRequestLostAfterSendingIsReportedAndNeverSentTwice() throws {
        let fake = try FakeLineServer { _ in .close }
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: fake.port))
        #expect(throws: EntitledClientError.connectionClosed(address: .tcp(host: "127.0.0.1", port: fake.port))) {
            try connection.send(.grant(user: "u1", product: "prod_a"))
        }
        #expect(fake.receivedLines == [#"{"op":"grant","user":"u1","product":"prod_a"}"#])
        #expect(fake.acceptedConnections == 1)
    }

    @Test func aSilentServerIsATimeout() throws {
        let fake = try FakeLineServer { _ in .silence }
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: fake.port), timeout: 0.3)
        let started = ContinuousClock.now
        #expect(throws: EntitledClientError.timedOut(address: .tcp(host: "127.0.0.1", port: fake.port), seconds: 0.3)) {
            try connection.send(.ping)
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(!connection.isConnected)
    }

    @Test func aLineThatIsNotAResponseIsMalformed() throws {
        let fake = try FakeLineServer { _ in .line("+PONG") }
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: fake.port))
        do {
            _ = try connection.send(.ping)
            Issue.record("expected malformedResponse")
        } catch {
            guard case .malformedResponse(let line, _) = error else {
                Issue.record("expected malformedResponse, got \(error)")
                return
            }
            #expect(line == "+PONG")
        }
    }

    @Test func aTokenIsSentInAnAuthRequestRightAfterConnecting() throws {
        let fake = try FakeLineServer { line in
            line.contains(#""op":"auth""#) ? .line(#"{"ok":true}"#) : .line(#"{"ok":true,"id":1}"#)
        }
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: fake.port), token: "t0ken")
        #expect(try connection.send(.ping).isOK)
        #expect(fake.receivedLines == [#"{"op":"auth","token":"t0ken"}"#, #"{"op":"ping"}"#])
        #expect(!connection.serverIgnoresAuthentication)
    }

    @Test func aRefusedTokenIsAuthenticationFailed() throws {
        let fake = try FakeLineServer { _ in
            .line(#"{"ok":false,"error":{"code":"unauthorized","message":"unknown token"}}"#)
        }
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: fake.port), token: "wrong")
        do {
            _ = try connection.send(.ping)
            Issue.record("expected authenticationFailed")
        } catch {
            #expect(error.message == "127.0.0.1:\(fake.port) refused the token: unknown token")
        }
        #expect(fake.receivedLines.count == 1)
    }

    @Test func aServerWithoutAuthenticationIsNotedWhenATokenIsGiven() throws {
        let server = try RunningEntitled()
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port), token: "t0ken")
        #expect(try connection.send(.ping).isOK)
        #expect(connection.serverIgnoresAuthentication)
    }

    // MARK: pushed lines

    static let pushLine =
        #"{"push":"access","cause":"grant","membership":{"id":"mem_2p12nek6vz5pf","productId":"prod_plus_m","user":"user_9","status":"active","isActive":true,"createdAt":"2026-11-22T07:02:59.507Z","expiresAt":"2026-12-22T07:02:59.507Z","source":"stripe","willRenew":true,"periodType":"normal","renewState":"will_renew","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}}"#

    @Test func aLinePushedBeforeTheAnswerIsKeptForNextPushNotTakenForTheAnswer() throws {
        let fake = try FakeLineServer { _ in .line(Self.pushLine + "\n" + Self.pushLine + "\n" + #"{"ok":true,"claimed":0}"#) }
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: fake.port))
        let answer = try connection.send(.claim(device: "d1", user: "u1"))
        #expect(answer.line == #"{"ok":true,"claimed":0}"#)
        #expect(try connection.nextPush(timeout: 0)?.line == Self.pushLine)
        #expect(try connection.nextPush(timeout: 0)?.membership?.id == "mem_2p12nek6vz5pf")
        #expect(try connection.nextPush(timeout: 0) == nil)
        #expect(connection.isConnected)
    }

    @Test func pushesAlreadyReadAreTakenTogetherWithoutWaiting() throws {
        let fake = try FakeLineServer { _ in .line(#"{"ok":true}"# + "\n" + Self.pushLine) }
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: fake.port))
        #expect(try connection.send(.ping).isOK)
        // The push came after the answer: it is read from the socket by the next look.
        let started = ContinuousClock.now
        var pushes: [EntitledPush] = []
        while pushes.isEmpty && ContinuousClock.now - started < .seconds(5) { pushes = connection.takeAvailablePushes() }
        #expect(pushes.map(\.cause) == ["grant"])
        #expect(connection.takeAvailablePushes().isEmpty)
    }

    @Test func anAnswerNobodyAskedForIsMalformedAndDropsTheConnection() throws {
        let fake = try FakeLineServer { _ in .line(#"{"ok":true}"# + "\n" + #"{"ok":true,"extra":1}"#) }
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: fake.port))
        #expect(try connection.send(.ping).line == #"{"ok":true}"#)
        #expect(throws: EntitledClientError.malformedResponse(line: #"{"ok":true,"extra":1}"#, reason: "the server answered a request that was not sent")) {
            try connection.nextPush(timeout: 5)
        }
        #expect(!connection.isConnected)
    }

    @Test func nextPushWithoutAConnectionIsConnectionClosedAndNoPushInTimeIsNil() throws {
        let fake = try FakeLineServer { _ in .line(#"{"ok":true}"#) }
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: fake.port))
        #expect(throws: EntitledClientError.connectionClosed(address: .tcp(host: "127.0.0.1", port: fake.port))) {
            try connection.nextPush(timeout: 0)
        }
        #expect(try connection.send(.ping).isOK)
        let started = ContinuousClock.now
        #expect(try connection.nextPush(timeout: 0.2) == nil)
        #expect(ContinuousClock.now - started >= .milliseconds(150))
        #expect(connection.isConnected)
    }

    @Test func aWatchingConnectionIsPushedEachChangeOfARealServerBesideItsAnswers() throws {
        let server = try RunningEntitled()
        let address = ServerAddress.tcp(host: "127.0.0.1", port: server.port)
        let watcher = EntitledConnection(address: address)
        let admin = EntitledConnection(address: address)
        let watch = try watcher.send(.watch(user: "u1"))
        #expect(watch.watches == 1)
        #expect(watcher.watchCount == 1)

        let grant = try admin.send(.grant(user: "u1", product: "prod_pro", duration: "30d", willRenew: true, periodType: "trial"))
        let membership = try #require(grant.membership)
        #expect(membership.status == "trialing")
        let pushed = try #require(try watcher.nextPush(timeout: 10))
        #expect(pushed.cause == "grant")
        #expect(pushed.membership?.id == membership.id)
        #expect(pushed.membership?.willRenew == true)

        let event = try admin.send(
            .event(membership: membership.id, type: "cancellation", eventId: "evt_1", eventTime: "2026-01-23T00:00:00Z")
        )
        #expect(event.eventOutcome == .applied)
        // A request while a push may be on its way: the answer is the answer, the push waits its turn.
        let history = try watcher.send(.history(user: "u1"))
        #expect(history.history?.map(\.action).first == "cancellation")
        let cancellation = try #require(try watcher.nextPush(timeout: 10))
        #expect(cancellation.cause == "cancellation")
        #expect(try #require(cancellation.sequence) > #require(pushed.sequence))
        #expect(cancellation.membership?.status == "canceled")
        #expect(cancellation.membership?.unsubscribeDetectedAt == "2026-01-23T00:00:00Z")

        let unwatch = try watcher.send(.unwatch())
        #expect(unwatch.watches == 0)
        #expect(watcher.watchCount == 0)
    }

    @Test func aReconnectReportsTheWatchesItLost() throws {
        let server = try RunningEntitled()
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port))
        #expect(try connection.send(.watchAll).watches == 1)
        #expect(connection.takeLostWatches() == 0)
        try server.restart()
        #expect(try connection.send(.ping).isOK)
        #expect(connection.watchCount == 0)
        #expect(connection.takeLostWatches() == 1)
        #expect(connection.takeLostWatches() == 0)
    }

    @Test func theLifecycleOperationsGetTheirTypedAnswersFromARealServer() throws {
        let server = try RunningEntitled()
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port))
        #expect(try connection.send(.define(entitlement: "pro", products: ["prod_pro"], reason: "launch")).isOK)
        let grant = try connection.send(
            .grant(
                user: "u1", device: "d1", product: "prod_pro", source: "app_store", duration: "30d", willRenew: true,
                environment: "sandbox", transactionId: "tx_2", originalTransactionId: "tx_1", idempotencyKey: "order-1",
                reason: "purchase"
            )
        )
        let membership = try #require(grant.membership)
        #expect(!grant.isIdempotentReplay)
        #expect(membership.environment == "sandbox")
        #expect(membership.transactions.map(\.id) == ["tx_2"])
        let replay = try connection.send(
            .grant(
                user: "u1", device: "d1", product: "prod_pro", source: "app_store", duration: "30d", willRenew: true,
                environment: "sandbox", transactionId: "tx_2", originalTransactionId: "tx_1", idempotencyKey: "order-1",
                reason: "purchase"
            )
        )
        #expect(replay.isIdempotentReplay)
        #expect(replay.membership?.id == membership.id)
        let conflict = try connection.send(.grant(user: "u1", product: "prod_other", idempotencyKey: "order-1"))
        #expect(conflict.error?.code == .conflict)

        let renewal = try connection.send(
            .event(
                membership: membership.id, type: "renewal", eventId: "evt_1", eventTime: "2026-01-22T00:00:00Z",
                expiresAt: "2030-01-22T00:00:00Z", transactionId: "tx_3"
            )
        )
        #expect(renewal.eventOutcome == .applied)
        #expect(renewal.membership?.renewsCount == 1)
        #expect(renewal.membership?.expiresAt == "2030-01-22T00:00:00Z")
        let again = try connection.send(
            .event(
                membership: membership.id, type: "renewal", eventId: "evt_1", eventTime: "2026-01-22T00:00:00Z",
                expiresAt: "2030-01-22T00:00:00Z"
            )
        )
        #expect(again.eventOutcome == .ignored(reason: "duplicate"))

        let customer = try #require(try connection.send(.customer(user: "u1")).customer)
        #expect(customer[entitlement: "pro"]?.membership == membership.id)
        #expect(customer[entitlement: "pro"]?.willRenew == true)
        #expect(customer.activeProducts == ["prod_pro"])

        let history = try #require(try connection.send(.history(user: "u1", limit: 10)).history)
        #expect(history.map(\.action) == ["renewal", "grant"])
        #expect(history.last?.reason == "purchase")
        #expect(history.first?.eventId == "evt_1")
        let catalog = try #require(try connection.send(.history(entitlement: "pro")).history)
        #expect(catalog.map(\.action) == ["define"])
        #expect(catalog.first?.products == ["prod_pro"])
        #expect(catalog.first?.reason == "launch")
    }
}
