@testable import EntitledClient
import Foundation
import Synchronization
import Testing

/// `EntitledPool` and a server that answers `loading` (starting): the request is asked again on a new
/// connection until the server answers it or the request's time is up; a read whose connection closes
/// after such an answer is asked again, a write is not. A scripted server stands in for the starting
/// one, so every case happens in the same order each time.
@Suite struct LoadingRetryTests {
    static let loading = #"{"ok":false,"error":{"code":"loading","message":"starting","loaded":1,"total":2}}"#
    static let active = #"{"ok":true,"active":true}"#

    /// What the scripted server does with connection `n` (counted from 0): answers each line it reads
    /// with the next of `answers`, then closes (without answering the line after the last, if any came).
    final class ScriptedServer: @unchecked Sendable {
        let port: Int
        private let listener: Int32
        private let accepted = Mutex(0)
        private let script: @Sendable (Int) -> [String]

        init(script: @escaping @Sendable (Int) -> [String]) throws {
            self.script = script
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
            }
            guard bound, listen(descriptor, 16) == 0 else {
                close(descriptor)
                throw POSIXError(.EADDRINUSE)
            }
            listener = descriptor
            port = Int(UInt16(bigEndian: address.sin_port))
            Thread { [self] in acceptLoop() }.start()
        }

        /// How many connections it accepted.
        var connections: Int { accepted.withLock { $0 } }

        func stop() { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }

        private func acceptLoop() {
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                let index = accepted.withLock { count in
                    defer { count += 1 }
                    return count
                }
                let answers = script(index)
                Thread { Self.serve(connection, answers: answers) }.start()
            }
        }

        private static func serve(_ connection: Int32, answers: [String]) {
            defer { close(connection) }
            var pending = answers[...]
            var byte: UInt8 = 0
            while recv(connection, &byte, 1, 0) == 1 {
                guard byte == UInt8(ascii: "\n") else { continue }
                guard let answer = pending.popFirst() else { return }
                _ = (answer + "\n").withCString { send(connection, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            }
        }
    }

    /// A long default timeout: the retries must not run out of time on a loaded machine (the whole suite at once).
    private func pool(_ server: ScriptedServer, timeout: Duration = .seconds(120)) -> EntitledPool {
        EntitledPool(
            address: .tcp(host: "127.0.0.1", port: server.port),
            configuration: .init(connections: 1, requestTimeout: timeout, initialBackoff: .milliseconds(5), maximumBackoff: .milliseconds(20))
        )
    }

    @Test func aRequestAnsweredLoadingIsAskedAgainOnANewConnectionUntilTheServerAnswersIt() async throws {
        // Two connections answered `loading`, then the ready server's answer.
        let server = try ScriptedServer { $0 < 2 ? [Self.loading] : [Self.active, Self.active] }
        defer { server.stop() }
        let pool = pool(server)
        #expect(try await pool.check(user: "u1", entitlement: "pro") == .active(until: nil))
        #expect(server.connections == 3)
        await pool.close()
    }

    @Test func whenTheRequestsTimeIsUpTheLoadingAnswerIsReturned() async throws {
        let server = try ScriptedServer { _ in [Self.loading] }
        defer { server.stop() }
        let pool = pool(server, timeout: .seconds(1))
        // Asked again until the second is up (how often, and how long the whole takes, depends on the
        // machine's load: with the whole suite at once the test's tasks wait for threads for many seconds),
        // then the answer comes back as it was, neither thrown nor turned into a timeout.
        let answer = try await pool.send(EntitledRequest(op: "ping"))
        #expect(answer.error?.code == .loading)
        await pool.close()
    }

    @Test func aReadWhoseConnectionClosesAfterALoadingAnswerIsAskedAgainAWriteIsNot() async throws {
        // The first connection answers `loading`; the second closes without answering (the server became
        // ready); the third answers.
        let readServer = try ScriptedServer { [[Self.loading], [], [Self.active]][min($0, 2)] }
        defer { readServer.stop() }
        let readPool = pool(readServer)
        #expect(try await readPool.check(user: "u1", entitlement: "pro") == .active(until: nil))
        await readPool.close()

        let writeServer = try ScriptedServer { [[Self.loading], [], [#"{"ok":true,"seq":1}"#]][min($0, 2)] }
        defer { writeServer.stop() }
        let writePool = pool(writeServer)
        await #expect(throws: EntitledClientError.self) {
            _ = try await writePool.send(EntitledRequest(op: "grant", fields: [(key: "user", value: .string("u1")), (key: "product", value: .string("p"))]))
        }
        #expect(writeServer.connections == 2, "a write lost with its connection was sent again")
        await writePool.close()
    }
}

/// `EntitledConnection` (the blocking facade) and a server that answers `loading`: the same rules as the
/// pool's, bounded by `loadingWait` instead of a request's timeout.
@Suite struct ConnectionLoadingRetryTests {
    typealias ScriptedServer = LoadingRetryTests.ScriptedServer

    private func connection(_ server: ScriptedServer, loadingWait: Double = 120) -> EntitledConnection {
        EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port), loadingWait: loadingWait)
    }

    @Test func aRequestAnsweredLoadingIsAskedAgainOnANewConnectionUntilTheServerAnswersIt() throws {
        let server = try ScriptedServer { $0 < 2 ? [LoadingRetryTests.loading] : [LoadingRetryTests.active] }
        defer { server.stop() }
        let answer = try connection(server).send(.check(user: "u1", entitlement: "pro"))
        #expect(answer["active"]?.boolValue == true)
        #expect(server.connections == 3)
    }

    @Test func whenLoadingWaitIsUpTheLoadingAnswerIsReturned() throws {
        let server = try ScriptedServer { _ in [LoadingRetryTests.loading] }
        defer { server.stop() }
        let waiting = connection(server, loadingWait: 0.3)
        let answer = try waiting.send(EntitledRequest(op: "ping"))
        #expect(answer.error?.code == .loading)
        #expect(server.connections >= 2, "asked once only")

        let impatient = connection(server, loadingWait: 0)
        let before = server.connections
        #expect(try impatient.send(line: #"{"op":"ping"}"#).error?.code == .loading)
        #expect(server.connections == before + 1, "a loadingWait of 0 asked again")
    }

    @Test func aReadWhoseConnectionClosesAfterALoadingAnswerIsAskedAgainAWriteIsNot() throws {
        let readServer = try ScriptedServer { [[LoadingRetryTests.loading], [], [LoadingRetryTests.active]][min($0, 2)] }
        defer { readServer.stop() }
        #expect(try connection(readServer).send(.check(user: "u1", entitlement: "pro"))["active"]?.boolValue == true)

        let writeServer = try ScriptedServer { [[LoadingRetryTests.loading], [], [#"{"ok":true,"seq":1}"#]][min($0, 2)] }
        defer { writeServer.stop() }
        #expect(throws: EntitledClientError.self) {
            _ = try connection(writeServer).send(.grant(user: "u1", product: "p"))
        }
        #expect(writeServer.connections == 2, "a write lost with its connection was sent again")
    }

    @Test func thePauseBetweenAttemptsDoublesFrom50MillisecondsUpToTwoSeconds() {
        #expect((1...8).map(EntitledConnection.loadingPause(afterAnswers:)) == [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 2, 2])
    }
}
