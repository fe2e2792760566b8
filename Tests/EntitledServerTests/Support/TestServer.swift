import EntitledClient
import EntitledCore
import EntitledServer
import EntitledTestSupport
import Foundation
import Logging
import NIOCore

/// An in-process `EntitledServer` on an ephemeral TCP port (and optionally a Unix socket in a fresh
/// temporary directory), for the duration of `body`.
func withTestServer<Result>(
    unixSocket: Bool = false,
    maximumLineLength: Int = ServerConfiguration.defaultMaximumLineLength,
    eventLoops: Int = ServerConfiguration.defaultEventLoops,
    busyPollMicroseconds: Int = ServerConfiguration.defaultBusyPollMicroseconds,
    store: EntitlementStore = EntitlementStore(),
    configure: (inout ServerConfiguration) -> Void = { _ in },
    logs: RecordedLogs? = nil,
    _ body: (RunningServer) async throws -> Result
) async throws -> Result {
    let directory = try TemporaryDirectory()
    var configuration = ServerConfiguration(
        tcp: .init(host: "127.0.0.1", port: 0),
        unixSocketPath: unixSocket ? directory.path + "/entitled.sock" : nil,
        maximumLineLength: maximumLineLength,
        eventLoops: eventLoops,
        busyPollMicroseconds: busyPollMicroseconds
    )
    // No authentication deadline unless a test sets one: the runner's tasks may be held up for seconds
    // between a test's connect and its `auth` when the machine is loaded (seen: 13 s), and the
    // deadline has tests of its own against real processes (AuthenticationDeadlineTests).
    configuration.authenticationTimeoutSeconds = 0
    configure(&configuration)
    var logger = logs.map { logs in Logger(label: "entitled-test") { _ in RecordingLogHandler(logs) } } ?? Logger(label: "entitled-test")
    logger.logLevel = logs == nil ? .warning : .debug
    let server = EntitledServer(store: store, configuration: configuration, logger: logger)
    let addresses = try await server.start()
    let running = RunningServer(
        server: server,
        store: store,
        port: addresses.first?.port ?? 0,
        unixSocketPath: configuration.unixSocketPath,
        directory: directory
    )
    do {
        let result = try await body(running)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

struct RunningServer {
    let server: EntitledServer
    let store: EntitlementStore
    let port: Int
    let unixSocketPath: String?
    let directory: TemporaryDirectory

    /// A client connection over TCP, for exchanging requests and answers.
    func connect() async throws -> EntitledAsyncConnection {
        try await EntitledAsyncConnection.local(port: port)
    }

    /// A raw byte pipe over TCP, for tests of the bytes on the wire.
    func rawSocket(receiveBufferSize: Int32? = nil) throws -> RawSocket {
        try RawSocket(port: port, receiveBufferSize: receiveBufferSize)
    }
}
