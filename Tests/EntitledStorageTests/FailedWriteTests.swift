import EntitledCore
import Foundation
import Testing

@testable import EntitledStorage

/// A write the log could not keep leaves no trace: not in memory, not in a snapshot, not after a restart.
/// The disk's failures are injected (`FileSystem.Fault`) for this test's directory only; the real full
/// disk is `FullDiskProcessTests`.
@Suite struct FailedWriteTests {
    /// The log's verdict on one change, waited for.
    final class Verdict: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var result: Result<Void, JournalError>?
        /// What the store showed of the change when its writer heard the verdict.
        private var visibleAtVerdict: Bool?

        init(_ sequence: UInt64, in durable: DurableStore, membership: MembershipID? = nil) {
            durable.log.whenAcknowledged(sequence) { [self] outcome in
                let visible = membership.map { durable.store.membership(withID: $0) != nil }
                lock.withLock {
                    result = outcome
                    visibleAtVerdict = visible
                }
                done.signal()
            }
        }

        /// The verdict, within 10 seconds.
        func wait() throws -> (result: Result<Void, JournalError>, visibleAtVerdict: Bool?) {
            try #require(done.wait(timeout: .now() + 10) == .success, "the log gave no verdict")
            return lock.withLock { (result!, visibleAtVerdict) }
        }
    }

    static func grant(_ user: String, key: String? = nil, in durable: DurableStore) throws(StoreError) -> Recorded<Membership> {
        try durable.store.grant(Grant(subject: .user(user), productId: "prod_pro", idempotencyKey: key))
    }

    static func isActive(_ user: String, in store: EntitlementStore) throws -> Bool {
        try store.check(AccessQuery(subject: .user(user), filter: .anyProduct)).isActive
    }

    /// Grants to `users` and waits until the log holds them.
    static func grantAcknowledged(_ users: [String], in durable: DurableStore) throws {
        for user in users {
            let recorded = try grant(user, in: durable)
            guard case .success = try Verdict(recorded.sequence, in: durable).wait().result else {
                Issue.record("the grant to \(user) was not acknowledged")
                return
            }
        }
    }

    static func refusal(_ body: () throws(StoreError) -> Void) -> StoreError? {
        do throws(StoreError) {
            try body()
            return nil
        } catch {
            return error
        }
    }

    @Test func aChangeWhoseSyncFailsIsUndoneBeforeItsWriterHearsAndWritesStayRefusedUntilARestart() throws {
        try withScratchDirectory { directory in
            var durable: DurableStore? = try DurableStore(directory: directory, policy: .always)
            try Self.grantAcknowledged(["kept-1", "kept-2", "kept-3"], in: durable!)

            let fault = FileSystem.Fault(operation: "fdatasync", directory: directory, errno: EIO)
            FileSystem.inject(fault)
            let failed = try Self.grant("failed", in: durable!)
            let verdict = try Verdict(failed.sequence, in: durable!, membership: failed.value.id).wait()
            FileSystem.remove(fault)

            guard case .failure(let error) = verdict.result else {
                Issue.record("the change was acknowledged although its sync failed")
                return
            }
            #expect(error.reason.contains("EIO"), "\(error.reason)")
            #expect(error.reason.contains("restarted"), "\(error.reason)")
            #expect(verdict.visibleAtVerdict == false, "the writer heard of the failure while the change was still visible")
            #expect(try !Self.isActive("failed", in: durable!.store))
            #expect(try Self.isActive("kept-3", in: durable!.store))
            #expect(durable!.store.sequence == 3)

            // A failed sync is never retried: the disk's state is unknown until a restart reads it.
            let status = durable!.persistenceStatus
            #expect(!status.writable)
            #expect(status.outage?.kind == .diskFailed)
            #expect(status.outage?.resumesByItself == false)
            Thread.sleep(forTimeInterval: 0.5)  // several first retry delays: none may happen
            let refused = Self.refusal { () throws(StoreError) in _ = try Self.grant("later", in: durable!) }
            #expect(refused?.code == .unavailable)
            #expect(refused?.message.contains("restarted") == true, "\(String(describing: refused?.message))")
            #expect(durable!.log.statistics.resumes == 0)

            durable!.close()
            durable = nil
            let reopened = try DurableStore(directory: directory, policy: .always)
            defer { reopened.close() }
            #expect(reopened.store.sequence == 3)
            #expect(reopened.store.membershipCount == 3)
            #expect(try !Self.isActive("failed", in: reopened.store))
            #expect(try Self.isActive("kept-1", in: reopened.store))
        }
    }

    @Test func aBatchWhoseSyncFailsUndoesEveryChangeInItAndTheWritesThatReadThem() throws {
        try withScratchDirectory { directory in
            // The first sync is held open until the batch behind it is recorded; the second sync, the
            // batch's, fails.
            let syncs = NSLock()
            nonisolated(unsafe) var syncCount = 0
            let firstSyncStarted = DispatchSemaphore(value: 0)
            let releaseFirstSync = DispatchSemaphore(value: 0)
            let fault = FileSystem.Fault(operation: "fdatasync", directory: directory, errno: EIO)
            let durable = try DurableStore(
                directory: directory, policy: .always, clock: { Timestamp.now() }, logger: .init(label: "test"),
                preallocation: .standard,
                beforeSync: {
                    let count = syncs.withLock { syncCount += 1; return syncCount }
                    if count == 1 {
                        firstSyncStarted.signal()
                        releaseFirstSync.wait()
                    } else if count == 2 {
                        FileSystem.inject(fault)
                    }
                }
            )
            defer {
                FileSystem.remove(fault)
                durable.close()
            }
            let first = try Self.grant("first", in: durable)
            let firstVerdict = Verdict(first.sequence, in: durable)
            #expect(firstSyncStarted.wait(timeout: .now() + 10) == .success)

            // Recorded while the first sync runs: they go to disk together, in the next batch.
            let batch = try (0..<4).map { try Self.grant("batch-\($0)", key: "order-\($0)", in: durable) }
            // A retry of the last one reads a change that is not acknowledged yet: its answer depends on it.
            let retry = try Self.grant("batch-3", key: "order-3", in: durable)
            #expect(retry.isReplay)
            #expect(retry.sequence == batch.last!.sequence)
            let verdicts = batch.map { Verdict($0.sequence, in: durable, membership: $0.value.id) }
            let retryVerdict = Verdict(retry.sequence, in: durable)
            releaseFirstSync.signal()

            guard case .success = try firstVerdict.wait().result else {
                Issue.record("the first change, synced before the fault, was not acknowledged")
                return
            }
            for (index, verdict) in verdicts.enumerated() {
                let outcome = try verdict.wait()
                guard case .failure = outcome.result else {
                    Issue.record("batch-\(index) was acknowledged although its batch's sync failed")
                    continue
                }
                #expect(outcome.visibleAtVerdict == false, "batch-\(index) was still visible when its writer heard")
            }
            guard case .failure = try retryVerdict.wait().result else {
                Issue.record("a write that read a failed change was acknowledged")
                return
            }
            for index in 0..<4 { #expect(try !Self.isActive("batch-\(index)", in: durable.store)) }
            #expect(try Self.isActive("first", in: durable.store))
            #expect(durable.store.sequence == first.sequence)
            #expect(durable.store.membershipCount == 1)
        }
    }

    @Test func aFullDiskIsUndoneAndWritesResumeByThemselvesOnceItTakesWritesAgain() throws {
        try withScratchDirectory { directory in
            var durable: DurableStore? = try DurableStore(directory: directory, policy: .always)
            try Self.grantAcknowledged(["kept-1", "kept-2"], in: durable!)

            let fault = FileSystem.Fault(operation: "write", directory: directory, errno: ENOSPC)
            FileSystem.inject(fault)
            let failed = try Self.grant("failed", key: "order-failed", in: durable!)
            let verdict = try Verdict(failed.sequence, in: durable!, membership: failed.value.id).wait()
            guard case .failure(let error) = verdict.result else {
                FileSystem.remove(fault)
                Issue.record("the change was acknowledged although its write failed")
                return
            }
            #expect(error.reason.contains("ENOSPC"), "\(error.reason)")
            #expect(error.reason.contains("resume by themselves"), "\(error.reason)")
            #expect(verdict.visibleAtVerdict == false)
            #expect(try !Self.isActive("failed", in: durable!.store))
            let outage = try #require(durable!.persistenceStatus.outage)
            #expect(outage.kind == .diskFull)
            #expect(outage.resumesByItself)

            // While the disk is full, writes are refused at once, and tried again in the background.
            let refused = Self.refusal { () throws(StoreError) in _ = try Self.grant("meanwhile", in: durable!) }
            #expect(refused?.code == .unavailable)
            // Waited for, not a fixed pause: the first retry is due after 100 ms, but a loaded machine may
            // give the log's writer thread its turn much later.
            let firstRetry = ContinuousClock.now + .seconds(30)
            while (durable!.persistenceStatus.outage?.retries ?? 0) < 1, ContinuousClock.now < firstRetry { Thread.sleep(forTimeInterval: 0.01) }
            #expect((durable!.persistenceStatus.outage?.retries ?? 0) >= 1)
            #expect(durable!.persistenceStatus.outage?.since == outage.since)

            FileSystem.remove(fault)
            let deadline = ContinuousClock.now + .seconds(10)
            while durable!.log.currentOutage != nil {
                try #require(ContinuousClock.now < deadline, "writes did not resume once the disk took writes again")
                Thread.sleep(forTimeInterval: 0.02)
            }
            #expect(durable!.persistenceStatus.writable)
            #expect(durable!.log.statistics.resumes == 1)
            #expect(durable!.persistenceStatus.logOutages == 1)
            // The client that retries gets one membership, not two.
            try Self.grantAcknowledged(["after-1"], in: durable!)
            let retried = try Self.grant("failed", key: "order-failed", in: durable!)
            #expect(!retried.isReplay)
            guard case .success = try Verdict(retried.sequence, in: durable!).wait().result else {
                Issue.record("the retried grant was not acknowledged after writes resumed")
                return
            }
            _ = try durable!.snapshot()
            try Self.grantAcknowledged(["after-2"], in: durable!)

            durable!.close()
            durable = nil
            let reopened = try DurableStore(directory: directory, policy: .always)
            defer { reopened.close() }
            #expect(reopened.store.membershipCount == 5)
            #expect(reopened.store.memberships(visibleTo: .user("failed")).count == 1)
            for user in ["kept-1", "kept-2", "after-1", "failed", "after-2"] {
                #expect(try Self.isActive(user, in: reopened.store), "\(user)")
            }
            #expect(try !Self.isActive("meanwhile", in: reopened.store))
        }
    }

    @Test func aSnapshotNeverHoldsAChangeTheLogFailed() throws {
        try withScratchDirectory { directory in
            let durable = try DurableStore(directory: directory, policy: .always)
            defer { durable.close() }
            try Self.grantAcknowledged(["kept"], in: durable)

            let fault = FileSystem.Fault(operation: "fdatasync", directory: directory, errno: EIO)
            FileSystem.inject(fault)
            defer { FileSystem.remove(fault) }
            _ = try Self.grant("failed", in: durable)  // not acknowledged: the snapshot waits for it
            do throws(StorageError) {
                let report = try durable.snapshot()
                Issue.record("a snapshot was written with a change the log failed: \(report.file)")
            } catch {
                guard case .writesUnavailable = error else {
                    Issue.record("expected writesUnavailable, got \(error)")
                    return
                }
            }
            let snapshots = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("snapshot-") }
            #expect(snapshots.isEmpty, "\(snapshots)")
        }
    }

    @Test func theLogSinceTheSnapshotCountsTheSegmentsFoundAtStart() throws {
        try withScratchDirectory { directory in
            var durable: DurableStore? = try DurableStore(directory: directory, policy: .always)
            try Self.grantAcknowledged(["a", "b", "c"], in: durable!)
            let before = durable!.persistenceStatus.logBytesSinceSnapshot
            #expect(before > 0)
            durable!.close()
            durable = nil

            let reopened = try DurableStore(directory: directory, policy: .always)
            defer { reopened.close() }
            // The old segment (its records) and the new one's header: what a restart would read.
            let status = reopened.persistenceStatus
            #expect(status.logBytesSinceSnapshot == before + LogFormat.segmentHeaderLength)
            _ = try reopened.snapshot()
            #expect(reopened.persistenceStatus.logBytesSinceSnapshot < LogFormat.segmentHeaderLength * 2)
        }
    }
}
