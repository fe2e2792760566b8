import Dispatch
import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `EntitledConnection` as a blocking facade over `EntitledAsyncConnection`: waits that end when the event
/// loop delivers, and callers on many plain threads at once.
@Suite struct EntitledConnectionFacadeTests {
    @Test func aPushWaitedForIsHandedOutAndTheServersCloseEndsTheWatch() throws {
        let server = try RunningEntitled()
        let address = ServerAddress.tcp(host: "127.0.0.1", port: server.port)
        let watcher = EntitledConnection(address: address)
        #expect(try watcher.send(.watchAll).watches == 1)
        let granter = Thread {
            Thread.sleep(forTimeInterval: 0.2)
            let admin = EntitledConnection(address: address)
            _ = try? admin.send(.grant(user: "u1", product: "prod_a"))
        }
        granter.start()
        let started = ContinuousClock.now
        let push = try #require(try watcher.nextPush(timeout: 10))
        #expect(push.cause == "grant")
        #expect(ContinuousClock.now - started < .seconds(9))

        try server.restart()
        #expect(throws: EntitledClientError.connectionClosed(address: address)) { try watcher.nextPush(timeout: 10) }
        #expect(throws: EntitledClientError.connectionClosed(address: address)) { try watcher.nextPush(timeout: 0) }
        #expect(!watcher.isConnected)
        #expect(try watcher.send(.ping).isOK)
        #expect(watcher.takeLostWatches() == 1)
        #expect(watcher.droppedPushes == 0)
    }

    @Test func aTypedRequestsIdMustComeBackButARawLineIsNotChecked() throws {
        let fake = try FakeLineServer { _ in .line(#"{"ok":true,"id":8}"#) }
        let address = ServerAddress.tcp(host: "127.0.0.1", port: fake.port)
        let connection = EntitledConnection(address: address)
        #expect(try connection.send(line: #"{"op":"ping","id":7}"#).isOK)
        do {
            _ = try connection.send(EntitledRequest(op: "ping", fields: [("id", .number("7"))]))
            Issue.record("expected malformedResponse")
        } catch {
            guard case .malformedResponse = error else {
                Issue.record("expected malformedResponse, got \(error)")
                return
            }
        }
        #expect(!connection.isConnected)
        #expect(try connection.send(EntitledRequest(op: "ping", fields: [("id", .number("8"))])).isOK)
        #expect(fake.acceptedConnections == 2)
    }

    @Test func aLineHoldingANewlineIsRefusedAndTheConnectionStaysInStep() throws {
        let fake = try FakeLineServer { line in .line(#"{"ok":true,"echo":"# + String(line.count) + "}") }
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: fake.port))
        #expect(try connection.send(line: "{}").isOK)
        #expect(throws: EntitledClientError.lineContainsNewline) { _ = try connection.send(line: "{}\n{}") }
        #expect(connection.isConnected)
        #expect(try connection.send(line: "{ }")["echo"]?.intValue == 3)
        #expect(fake.receivedLines == ["{}", "{ }"])
        #expect(fake.acceptedConnections == 1)
    }

    @Test func closeThenSendOpensANewConnection() throws {
        let fake = try FakeLineServer { _ in .line(#"{"ok":true}"#) }
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: fake.port))
        #expect(try connection.send(.ping).isOK)
        connection.close()
        #expect(!connection.isConnected)
        #expect(connection.takeAvailablePushes().isEmpty)
        #expect(try connection.send(.ping).isOK)
        #expect(fake.acceptedConnections == 2)
    }

    @Test func connectFailuresKeepTheirReadableReasons() throws {
        let path = "/tmp/" + String(repeating: "x", count: 120) + ".sock"
        let long = EntitledConnection(address: .unixSocket(path: path))
        #expect(throws: EntitledClientError.cannotConnect(address: .unixSocket(path: path), reason: "the socket path is longer than 107 bytes")) {
            try long.send(.ping)
        }
        let unknown = EntitledConnection(address: .tcp(host: "no-such-host.invalid", port: 7117), timeout: 5)
        do {
            _ = try unknown.send(.ping)
            Issue.record("expected cannotConnect")
        } catch {
            guard case .cannotConnect(_, let reason) = error else {
                Issue.record("expected cannotConnect, got \(error)")
                return
            }
            #expect(!reason.contains("SocketAddressError"))
            #expect(reason.first?.isLowercase == true)
        }
    }

    /// Each thread blocks on its own connection; the event loop completes their waits, so none needs
    /// another thread to be free (nor the cooperative pool).
    @Test func manyPlainThreadsEachWithAConnectionAtOnce() throws {
        let server = try RunningEntitled()
        let address = ServerAddress.tcp(host: "127.0.0.1", port: server.port)
        let group = DispatchGroup()
        let failures = NSLock()
        nonisolated(unsafe) var failed: [String] = []
        for index in 0..<16 {
            group.enter()
            Thread {
                defer { group.leave() }
                let connection = EntitledConnection(address: address, timeout: 10)
                for request in 0..<25 {
                    do {
                        let answer = try connection.send(.grant(user: "t\(index)", product: "prod_\(request)"))
                        if !answer.isOK { failures.withLock { failed.append(answer.line) } }
                    } catch {
                        failures.withLock { failed.append("\(error)") }
                    }
                }
            }.start()
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(failures.withLock { failed }.isEmpty)
        let check = EntitledConnection(address: address)
        #expect(try check.send(.memberships(user: "t3")).memberships?.count == 25)
    }
}
