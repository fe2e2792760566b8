import EntitledClient
import EntitledCore
import EntitledServer
import EntitledTestSupport
import Foundation
import Logging
import Testing

@testable import EntitledStorage

/// When several connections' writes wait for one commit, the event loop hands the sync to the log's
/// writer thread and serves on (a lone writer's loop syncs itself). An in-process server on a
/// `DurableStore` whose acknowledgement syncs a gate holds open until the test lets each through.
@Suite("Commits handed to the log's writer thread")
struct HandedOffCommitTests {
    @Test func whileSeveralWritersWaitForTheirSyncTheLoopAnswersOtherConnections() async throws {
        let setting = try GatedServer()
        defer { setting.gate.openForGood() }
        let port = try await setting.start()
        let writers = try await setting.holdSixteenWritersInOneSync(port: port)

        // The loop is not blocked in that sync: another connection is answered meanwhile (a `ping`: a
        // read of the store would rightly wait for the sync, `--unsynced-reads hold` being the default).
        let reader = try RawSocket(port: port)
        #expect(try reader.readResponseTo(#"{"op":"ping"}"#).isOK)
        for writer in writers {
            #expect(writer.readAvailableLines().isEmpty, "a write was answered before its sync was made")
        }

        setting.gate.openForGood()
        for writer in writers {
            let answer = try writer.readResponse()
            #expect(answer.isOK, "\(answer.line)")
        }
        #expect(try reader.readResponseTo(#"{"op":"check","user":"writer-15","product":"prod_pro"}"#).active == true)
        let stats = try reader.readResponseTo(#"{"op":"stats"}"#)
        let handedOff = stats["persistence"]?["groupCommit"]?["handedOff"]?.intValue ?? 0
        #expect(handedOff >= 1, "\(stats.line)")
        await setting.server.stop()
        setting.durable.close()
    }

    @Test func aHandedOffSyncThatFailsAnswersEveryWriterUnavailableAndNoReaderSeesTheirWrites() async throws {
        let setting = try GatedServer()
        defer { setting.gate.openForGood() }
        let port = try await setting.start()
        let writers = try await setting.holdSixteenWritersInOneSync(port: port)
        // The held sync is the writer thread's: the loop still answers.
        let reader = try RawSocket(port: port)
        #expect(try reader.readResponseTo(#"{"op":"ping"}"#).isOK)

        let fault = FileSystem.Fault(operation: "fdatasync", directory: setting.dataDirectory, errno: EIO)
        FileSystem.inject(fault)
        defer { FileSystem.remove(fault) }
        setting.gate.openForGood()
        for writer in writers {
            let answer = try writer.readResponse()
            #expect(answer.error?.code == .unavailable, "\(answer.line)")
        }

        for index in writers.indices {
            let check = try reader.readResponseTo(#"{"op":"check","user":"writer-\#(index)","product":"prod_pro"}"#)
            #expect(check.active == false, "\(check.line)")
        }
        #expect(try reader.readResponseTo(#"{"op":"check","user":"first","product":"prod_pro"}"#).active == true)
        let stats = try reader.readResponseTo(#"{"op":"stats"}"#)
        #expect(stats["persistence"]?["logOutages"]?.intValue == 1, "\(stats.line)")
        #expect((stats["persistence"]?["groupCommit"]?["handedOff"]?.intValue ?? 0) >= 1, "\(stats.line)")
        await setting.server.stop()
        setting.durable.close()
    }

    /// A full disk while a handed-over commit is out, with more writes waiting behind it on the loop:
    /// every write whose record was not written before the disk filled is answered `unavailable` and
    /// seen by no reader; once the disk takes writes again, new writes are answered and kept, and a
    /// restart holds exactly the writes answered ok (the numbers of the failed changes are given again,
    /// to new ones).
    @Test func aFullDiskWhileAHandedOverCommitIsOutRefusesItsGroupAndTheWritesBehindItThenResumes() async throws {
        let setting = try GatedServer()
        defer { setting.gate.openForGood() }
        let port = try await setting.start()
        let acknowledgedGroup = try await setting.holdSixteenWritersInOneSync(port: port)
        // While that sync is held, a second group is read: it waits behind the commit that is out.
        let secondGroup = try (0..<8).map { _ in try RawSocket(port: port) }
        for (index, writer) in secondGroup.enumerated() {
            try writer.send(#"{"op":"grant","user":"second-\#(index)","product":"prod_pro"}"# + "\n")
        }
        let reader = try RawSocket(port: port)
        #expect(try reader.readResponseTo(#"{"op":"ping"}"#).isOK)

        // The second group's write fails (a full disk), slowly enough for a third group to be read meanwhile.
        let fault = FileSystem.Fault(operation: "write", directory: setting.dataDirectory, errno: ENOSPC, delayMilliseconds: 400)
        FileSystem.inject(fault)
        defer { FileSystem.remove(fault) }
        setting.gate.openForGood()
        // The held sync's records were written before the disk filled: those writes are answered ok.
        // Under load the writer thread may have taken only the first of the sixteen into that sync (its
        // timer flushes records nobody committed yet); the others' write then meets the full disk.
        var acknowledgedUsers = ["first"]
        var answers: [String] = []
        for (index, writer) in acknowledgedGroup.enumerated() {
            let answer = try writer.readResponse()
            answers.append("writer-\(index): \(answer.line)")
            if answer.isOK {
                acknowledgedUsers.append("writer-\(index)")
            } else {
                #expect(answer.error?.code == .unavailable, "\(answer.line)")
            }
        }
        #expect(acknowledgedUsers.count > 1, "the held sync's writes were refused: \(answers.joined(separator: "\n"))")
        let thirdGroup = try (0..<4).map { _ in try RawSocket(port: port) }
        for (index, writer) in thirdGroup.enumerated() {
            try writer.send(#"{"op":"grant","user":"third-\#(index)","product":"prod_pro"}"# + "\n")
        }
        for writer in secondGroup + thirdGroup {
            let answer = try writer.readResponse()
            #expect(answer.error?.code == .unavailable, "\(answer.line)")
        }
        let refusedUsers = (0..<16).map { "writer-\($0)" }.filter { !acknowledgedUsers.contains($0) }
            + (0..<8).map { "second-\($0)" } + (0..<4).map { "third-\($0)" }
        for user in acknowledgedUsers {
            #expect(try reader.readResponseTo(#"{"op":"check","user":"\#(user)","product":"prod_pro"}"#).active == true, "\(user)")
        }
        for user in refusedUsers {
            let check = try reader.readResponseTo(#"{"op":"check","user":"\#(user)","product":"prod_pro"}"#)
            #expect(check.active == false, "\(user): \(check.line)")
        }

        // The disk takes writes again: writes resume by themselves.
        FileSystem.remove(fault)
        let deadline = ContinuousClock.now + .seconds(20)
        var resumed: EntitledResponse?
        while ContinuousClock.now < deadline {
            let answer = try reader.readResponseTo(#"{"op":"grant","user":"after","product":"prod_pro"}"#)
            if answer.isOK {
                resumed = answer
                break
            }
            #expect(answer.error?.code == .unavailable, "\(answer.line)")
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(resumed != nil, "writes did not resume once the disk took writes again")
        #expect(try reader.readResponseTo(#"{"op":"check","user":"after","product":"prod_pro"}"#).active == true)
        await setting.server.stop()
        setting.durable.close()

        let reopened = try DurableStore(directory: setting.dataDirectory, policy: .always)
        defer { reopened.close() }
        #expect(reopened.store.membershipCount == acknowledgedUsers.count + 1)
        for user in acknowledgedUsers + ["after"] {
            #expect(reopened.store.memberships(visibleTo: .user(user)).count == 1, "\(user)")
        }
        for user in refusedUsers {
            #expect(reopened.store.memberships(visibleTo: .user(user)).isEmpty, "\(user)")
        }
    }
}

/// A one-loop server on a data directory whose log syncs wait at `gate`.
private struct GatedServer {
    let directory: TemporaryDirectory
    let gate = SyncGate()
    let durable: DurableStore
    let server: EntitledServer

    var dataDirectory: String { directory.path + "/data" }

    init() throws {
        directory = try TemporaryDirectory()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let gate = self.gate
        durable = try DurableStore(
            directory: directory.path + "/data", policy: .always, clock: { Timestamp.now() }, logger: logger,
            preallocation: .standard, beforeSync: { gate.hold() }
        )
        server = EntitledServer(
            processor: RequestProcessor(durable: durable),
            // One loop, so that every connection below is served by the loop whose sync is in question.
            configuration: ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0), eventLoops: 1),
            logger: logger
        )
    }

    func start() async throws -> Int {
        try #require(try await server.start().first?.port)
    }

    /// Holds the sync of a first grant (user "first"), sends sixteen grants (users "writer-0"...) while it
    /// is held, lets it through and waits until the sixteen's sync is held in turn. The loop read them
    /// together (or while the first commit was out), so they wait for one commit it handed over; under
    /// load the writer thread's timer (records nobody committed yet) may take only the first of them
    /// into that sync, and the rest wait for the next.
    func holdSixteenWritersInOneSync(port: Int) async throws -> [RawSocket] {
        let first = try RawSocket(port: port)
        try first.send(#"{"op":"grant","user":"first","product":"prod_pro"}"# + "\n")
        try await gate.waitUntilEntered(1)
        let writers = try (0..<16).map { _ in try RawSocket(port: port) }
        for (index, writer) in writers.enumerated() {
            try writer.send(#"{"op":"grant","user":"writer-\#(index)","product":"prod_pro"}"# + "\n")
        }
        gate.letThrough()
        #expect(try first.readResponse().isOK)
        try await gate.waitUntilEntered(2)
        return writers
    }
}

/// Holds each of the log's acknowledgement syncs (on whichever thread makes it) until let through.
private final class SyncGate: @unchecked Sendable {
    // @unchecked: `entered` and `open` are guarded by `lock`; the semaphore is thread-safe.
    private let lock = NSLock()
    private var entered = 0
    private var open = false
    private let passage = DispatchSemaphore(value: 0)

    /// Called before each sync: counts it and waits to be let through.
    func hold() {
        let mayPass = lock.withLock { () -> Bool in
            entered += 1
            return open
        }
        if !mayPass { passage.wait() }
    }

    func letThrough() { passage.signal() }

    /// Lets every held sync through, and every later one at once.
    func openForGood() {
        let held = lock.withLock { () -> Int in
            defer { open = true }
            return open ? 0 : entered
        }
        for _ in 0..<max(held, 1) { passage.signal() }
    }

    /// Waits (up to 10 s) until `count` syncs have reached the gate.
    func waitUntilEntered(_ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while lock.withLock({ entered }) < count {
            guard ContinuousClock.now < deadline else {
                throw RawSocket.Failure(description: "sync \(count) never came (\(lock.withLock { entered }) did)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

extension RawSocket {
    /// Sends one request line and reads its answer.
    fileprivate func readResponseTo(_ line: String) throws -> EntitledResponse {
        try send(line + "\n")
        return try readResponse()
    }
}
