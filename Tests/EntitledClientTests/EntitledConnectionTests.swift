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
        #expect(missing.error?.code == "not_found")
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
}
