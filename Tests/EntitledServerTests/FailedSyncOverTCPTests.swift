import EntitledClient
import EntitledCore
import EntitledServer
import EntitledTestSupport
import Foundation
import Logging
import Testing

@testable import EntitledStorage

/// What clients see when the log's `fdatasync` fails (`EIO`, injected for this test's data directory:
/// a real one cannot be made on demand): an in-process server on a `DurableStore`.
@Suite("A failed sync, over TCP")
struct FailedSyncOverTCPTests {
    /// An in-process server on `durable`, on a free loopback port.
    private func startServer(on durable: DurableStore) async throws -> (EntitledServer, Int) {
        var logger = Logger(label: "test")
        logger.logLevel = .error
        let server = EntitledServer(
            processor: RequestProcessor(durable: durable),
            configuration: ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0)),
            logger: logger
        )
        let port = try #require(try await server.start().first?.port)
        return (server, port)
    }

    /// Stops `server`, closes `durable`, takes `fault` away and opens the data directory again: what a
    /// restart after the disk is mended finds there.
    private func stopAndReopen(_ server: EntitledServer, _ durable: DurableStore, removing fault: FileSystem.Fault, data: String) async throws
        -> DurableStore
    {
        await server.stop()
        durable.close()
        FileSystem.remove(fault)
        return try DurableStore(directory: data, policy: .always)
    }

    @Test func aWriteWhoseSyncFailsIsAnsweredUnavailableIsSeenByNoReaderOrWatcherAndWritesWaitForARestart() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let durable = try DurableStore(directory: data, policy: .always)
        let (server, port) = try await startServer(on: durable)
        let writer = try await EntitledAsyncConnection.local(port: port)
        let reader = try await EntitledAsyncConnection.local(port: port)
        let watcher = try await EntitledAsyncConnection.local(port: port)
        #expect(try await watcher.send(line: #"{"op":"watch","all":true}"#).isOK)

        #expect(try await writer.send(line: #"{"op":"grant","user":"kept","product":"prod_pro"}"#).isOK)
        let kept = await watcher.nextPush()
        #expect(kept?.membership?.user == "kept")

        let fault = FileSystem.Fault(operation: "fdatasync", directory: data, errno: EIO)
        FileSystem.inject(fault)
        defer { FileSystem.remove(fault) }
        let failed = try await writer.send(line: #"{"op":"grant","user":"failed","product":"prod_pro"}"#)
        #expect(failed.error?.code == .unavailable, "\(failed.line)")
        let message = failed.error?.message ?? ""
        #expect(message.contains("not made") && message.contains("EIO") && message.contains("restarted"), "\(message)")

        #expect(try await reader.send(line: #"{"op":"check","user":"failed","product":"prod_pro"}"#).active == false)
        #expect(try await reader.send(line: #"{"op":"memberships","user":"failed"}"#).memberships?.isEmpty == true)
        #expect(try await reader.send(line: #"{"op":"check","user":"kept","product":"prod_pro"}"#).active == true)
        // Nothing announced: a push would have come by the time the answer did.
        #expect(await watcher.nextPush(within: .milliseconds(300)) == nil)

        let later = try await writer.send(line: #"{"op":"define","entitlement":"pro","products":["prod_pro"]}"#)
        #expect(later.error?.code == .unavailable, "\(later.line)")
        let snapshot = try await writer.send(line: #"{"op":"snapshot"}"#)
        #expect(snapshot.error?.code == .unavailable, "\(snapshot.line)")

        let stats = try await reader.send(line: #"{"op":"stats"}"#)
        let persistence = try #require(stats["persistence"], "\(stats.line)")
        #expect(persistence["writable"]?.boolValue == false)
        #expect(persistence["unwritable"]?["kind"]?.stringValue == "disk_failed")
        #expect(persistence["unwritable"]?["resumesByItself"]?.boolValue == false)
        #expect(persistence["logOutages"]?.intValue == 1)
        #expect(stats["errors"]?["byCode"]?["unavailable"]?.intValue == 3, "\(stats.line)")

        let reopened = try await stopAndReopen(server, durable, removing: fault, data: data)
        defer { reopened.close() }
        #expect(reopened.store.membershipCount == 1)
        #expect(reopened.store.memberships(visibleTo: .user("failed")).isEmpty)
    }

    /// Pipelined writes of one connection wait for the log together (a run of answers in one buffer,
    /// `AnswerQueue`): each is still answered for itself, in its place, with its own id.
    @Test func pipelinedWritesAreAnsweredEachInItsPlaceWithItsOwnIDWhetherTheirSyncSucceedsOrFails() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let durable = try DurableStore(directory: data, policy: .always)
        let (server, port) = try await startServer(on: durable)
        let client = try RawSocket(port: port)
        /// Two grants, a check of the first, a third grant: sent at once, read by the server in one turn.
        func batch(_ prefix: String) -> String {
            #"{"op":"grant","user":"\#(prefix)-1","product":"prod_pro","id":1}"# + "\n"
                + #"{"op":"grant","user":"\#(prefix)-2","product":"prod_pro","id":"two"}"# + "\n"
                + #"{"op":"check","user":"\#(prefix)-1","product":"prod_pro","id":"check"}"# + "\n"
                + #"{"op":"grant","user":"\#(prefix)-3","product":"prod_pro","id":[3]}"# + "\n"
        }

        let ids: [JSONValue?] = [.number("1"), .string("two"), .string("check"), .array([.number("3")])]
        try client.send(batch("kept"))
        var answers = try (0..<4).map { _ in try client.readResponse() }
        #expect(answers.map { $0["id"] } == ids, "\(answers.map(\.line))")
        #expect(answers[0].isOK && answers[1].isOK && answers[3].isOK, "\(answers.map(\.line))")
        #expect(answers[0].membership?.user == "kept-1" && answers[1].membership?.user == "kept-2" && answers[3].membership?.user == "kept-3")
        #expect(answers[2].active == true, "\(answers[2].line)")

        let fault = FileSystem.Fault(operation: "fdatasync", directory: data, errno: EIO)
        FileSystem.inject(fault)
        defer { FileSystem.remove(fault) }
        try client.send(batch("failed"))
        answers = try (0..<4).map { _ in try client.readResponse() }
        #expect(answers.map { $0["id"] } == ids, "\(answers.map(\.line))")
        for index in [0, 1, 3] {
            #expect(answers[index].error?.code == .unavailable, "\(answers[index].line)")
        }
        // The check saw a change the log then failed to keep: answered again from what the log holds.
        #expect(answers[2].active == false, "\(answers[2].line)")

        client.closeSending()  // else the stop lingers for it
        let reopened = try await stopAndReopen(server, durable, removing: fault, data: data)
        defer { reopened.close() }
        #expect(reopened.store.membershipCount == 3)
        #expect(reopened.store.memberships(visibleTo: .user("failed-1")).isEmpty)
    }
}
