import EntitledCore
import Foundation
import EntitledTestSupport
import Logging
import Synchronization
import Testing

@testable import EntitledServer
@testable import EntitledStorage

/// A group's commit that fails after the log's writer thread had already synced the group's first writes
/// (its timer takes records nobody committed yet): those writes were made and stay, so the failure says
/// how far the log got, and their writers are answered ok; only the writes after them failed.
@Suite struct PartlyMadeCommitTests {
    @Test func aCommitThatFailsAfterItsFirstChangeWasSyncedSaysThatChangeWasMade() throws {
        let directory = try TemporaryDirectory()
        let dataDirectory = directory.path + "/data"
        let gate = Gate()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let durable = try DurableStore(
            directory: dataDirectory, policy: .always, clock: { Timestamp.now() }, logger: logger, preallocation: .standard,
            beforeSync: { gate.passOrWait() }
        )
        defer { durable.close() }
        let backend = try #require(RequestProcessor(durable: durable).log)

        // The first write's record is taken and synced by the writer thread, whose sync the gate holds.
        let made = try durable.store.grant(Grant(subject: .user("made"), productId: "prod_pro")).sequence
        durable.log.whenAcknowledged(made) { _ in }
        try gate.waitUntilHeld()
        // The second is recorded meanwhile, and one commit through both is asked for (a group's).
        let failed = try durable.store.grant(Grant(subject: .user("failed"), productId: "prod_pro")).sequence
        let outcome = Mutex<Result<Void, WriteFailure>?>(nil)
        let answered = DispatchSemaphore(value: 0)
        let known = backend.commit(through: failed, onThisThread: false) { result in
            outcome.withLock { $0 = result }
            answered.signal()
        }
        #expect(known == nil, "the commit was settled before the held sync was let through")

        // The disk fills before the second record is written: the first's sync completes, the second fails.
        let fault = FileSystem.Fault(operation: "write", directory: dataDirectory, errno: ENOSPC)
        FileSystem.inject(fault)
        defer { FileSystem.remove(fault) }
        gate.open()
        #expect(answered.wait(timeout: .now() + 60) == .success)

        guard case .failure(let failure) = outcome.withLock({ $0 }) else {
            Issue.record("the commit through the second write must fail: \(String(describing: outcome.withLock { $0 }))")
            return
        }
        #expect(failure.outcome == .notMade)
        #expect(failure.madeThrough == made, "the first write was synced before the failure and stays")
        // What the log holds is what memory holds: the first write, not the second.
        #expect(durable.store.memberships(visibleTo: .user("made")).count == 1)
        #expect(durable.store.memberships(visibleTo: .user("failed")).isEmpty)
    }
}

/// Holds the first sync until opened; lets every later one through.
private final class Gate: @unchecked Sendable {
    // @unchecked: `held` and `isOpen` are guarded by `lock`; the semaphores are thread-safe.
    private let lock = NSLock()
    private var held = false
    private var isOpen = false
    private let entered = DispatchSemaphore(value: 0)
    private let passage = DispatchSemaphore(value: 0)

    func passOrWait() {
        let mustWait = lock.withLock { () -> Bool in
            guard !isOpen, !held else { return false }
            held = true
            return true
        }
        guard mustWait else { return }
        entered.signal()
        passage.wait()
    }

    func waitUntilHeld() throws {
        guard entered.wait(timeout: .now() + 60) == .success else {
            throw TestSupportFailure(description: "the writer thread never synced the first write")
        }
    }

    func open() {
        lock.withLock { isOpen = true }
        passage.signal()
    }
}
