import EntitledClient
import EntitledCore
import EntitledServer
import EntitledTestSupport
import Foundation
import Logging
import Testing

@testable import EntitledStorage

/// `--unsynced-reads`: whether another connection is answered from a change the log has not synced yet.
/// The sync is slowed (or failed) for this test's data directory only, so that the window is wide.
@Suite("Reads and unsynced changes", .serialized)
struct HeldReadsTests {
    /// A server with a data directory synced on every acknowledgement.
    static func withServer(
        _ reads: UnsyncedReads, _ body: (_ port: Int, _ data: String) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let durable = try DurableStore(directory: data, policy: .always)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        // Two loops, so that the reader's is not the one the writer's slow sync blocks (connections are
        // handed to the loops in turn: the writer's first, the reader's second).
        var configuration = ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0), eventLoops: 2)
        configuration.unsyncedReads = reads
        let server = EntitledServer(processor: RequestProcessor(durable: durable), configuration: configuration, logger: logger)
        let port = try #require(try await server.start().first?.port)
        do {
            try await body(port, data)
        } catch {
            await server.stop()
            durable.close()
            throw error
        }
        await server.stop()
        durable.close()
    }

    /// Sends `line` on `connection` in a task of its own, which gives its answer and when it arrived.
    static func sendLater(
        _ line: String, on connection: EntitledAsyncConnection
    ) -> Task<(answer: EntitledResponse, at: ContinuousClock.Instant), any Error> {
        Task {
            let answer = try await connection.send(line: line)
            return (answer, ContinuousClock.now)
        }
    }

    /// Waits until the server has entered the call `fault` slows (so the change it syncs is in the store),
    /// or gives up after `limit`: a loaded machine may not have sent the write yet.
    static func waitUntilHit(_ fault: FileSystem.Fault, limit: Duration = .seconds(5)) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while FileSystem.hits(of: fault) == 0 {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    @Test func withHoldAReadOfAChangeWaitsUntilTheLogHasSyncedIt() async throws {
        try await Self.withServer(.hold) { port, data in
            let writer = try await EntitledAsyncConnection.local(port: port)
            let reader = try await EntitledAsyncConnection.local(port: port)
            #expect(try await writer.send(line: #"{"op":"grant","user":"warm","product":"p"}"#).isOK)
            // Served before the sync is slowed: the first loop accepts every connection, and one still in
            // its backlog would wait for the writer's sync on that loop.
            #expect(try await reader.send(line: #"{"op":"ping"}"#).isOK)
            // The read must be sent while the grant's slowed sync runs; on a machine loaded enough that it
            // was not (the grant already answered when the read left), nothing was shown: once more.
            for attempt in 1...5 {
                let user = "held\(attempt)"
                let slow = FileSystem.Fault(operation: "fdatasync", directory: data, errno: 0, delayMilliseconds: 2000)
                FileSystem.inject(slow)
                let grant = Self.sendLater(#"{"op":"grant","user":"\#(user)","product":"p"}"#, on: writer)
                let syncing = try await Self.waitUntilHit(slow)
                let sent = ContinuousClock.now
                let check = try await reader.send(line: #"{"op":"check","user":"\#(user)","product":"p"}"#)
                let checkAnswered = ContinuousClock.now
                let (granted, grantAnswered) = try await grant.value
                FileSystem.remove(slow)
                #expect(granted.isOK)
                guard syncing, grantAnswered > sent else { continue }
                // The grant was answered before the read left (a loaded machine left this task unscheduled
                // through the whole sync): nothing shown either way, once more.
                #expect(check.active == true, "the read, sent during the grant's sync, did not see it: \(check.line)")
                // It saw the grant, but only once the grant was synced: its answer left with the grant's
                // (on another loop, so either may arrive first by a little), not before the sync ended.
                #expect(checkAnswered > grantAnswered - .milliseconds(500), "the read was answered \(grantAnswered - checkAnswered) before the grant, during its sync")
                return
            }
            Issue.record("in five attempts the read never reached the server while the grant's sync ran")
        }
    }

    @Test func withHoldAReadThatSawAChangeTheLogThenLostIsAnsweredWithoutIt() async throws {
        try await Self.withServer(.hold) { port, data in
            let writer = try await EntitledAsyncConnection.local(port: port)
            let reader = try await EntitledAsyncConnection.local(port: port)
            #expect(try await writer.send(line: #"{"op":"grant","user":"warm","product":"p"}"#).isOK)
            // Served before the sync is slowed: the first loop accepts every connection, and one still in
            // its backlog would wait for the writer's sync on that loop.
            #expect(try await reader.send(line: #"{"op":"ping"}"#).isOK)
            let failing = FileSystem.Fault(operation: "fdatasync", directory: data, errno: EIO, delayMilliseconds: 600)
            FileSystem.inject(failing)
            defer { FileSystem.remove(failing) }
            let grant = Self.sendLater(#"{"op":"grant","user":"doomed","product":"p"}"#, on: writer)
            // A generous limit: the grant's task may be held for seconds on a loaded machine, and this test
            // has no second attempt.
            let syncing = try await Self.waitUntilHit(failing, limit: .seconds(30))
            let check = try await reader.send(line: #"{"op":"check","user":"doomed","product":"p"}"#)
            #expect(try await grant.value.answer.error?.code == .unavailable)
            // The change was undone: the read is answered as if it had never been made.
            #expect(syncing, "the grant's sync never began")
            #expect(check.active == false, "\(check.line)")
        }
    }

    @Test func withAnswerAReadSeesAChangeBeforeItsSync() async throws {
        try await Self.withServer(.answer) { port, data in
            let writer = try await EntitledAsyncConnection.local(port: port)
            let reader = try await EntitledAsyncConnection.local(port: port)
            #expect(try await writer.send(line: #"{"op":"grant","user":"warm","product":"p"}"#).isOK)
            // Served before the sync is slowed: the first loop accepts every connection, and one still in
            // its backlog would wait for the writer's sync on that loop.
            #expect(try await reader.send(line: #"{"op":"ping"}"#).isOK)
            // A sync slow enough that the read, sent while it runs, is answered long before it ends: the gap
            // between the two answers is the proof. Both are seen by this test's tasks, which a loaded machine
            // (the rest of the suite) may leave unscheduled for a while and then resume together: such an
            // attempt shows nothing, and is made again. With `hold` every attempt ends that way, and fails.
            for attempt in 1...5 {
                let user = "early\(attempt)"
                let slow = FileSystem.Fault(operation: "fdatasync", directory: data, errno: 0, delayMilliseconds: 2000)
                FileSystem.inject(slow)
                let grant = Self.sendLater(#"{"op":"grant","user":"\#(user)","product":"p"}"#, on: writer)
                // The grant's sync has begun, so the grant is in the store: a read sent now must see it. (A
                // fixed pause was not enough: a loaded machine could delay the grant's send past it.)
                let syncing = try await Self.waitUntilHit(slow)
                let check = try await reader.send(line: #"{"op":"check","user":"\#(user)","product":"p"}"#)
                let checkAnswered = ContinuousClock.now
                let (granted, grantAnswered) = try await grant.value
                FileSystem.remove(slow)
                #expect(granted.isOK)
                guard syncing else { continue }
                #expect(check.active == true, "\(check.line)")
                if grantAnswered - checkAnswered > .milliseconds(500) { return }
            }
            Issue.record("in five attempts the read was never answered well before the grant's sync ended: it waited for it")
        }
    }
}
