import EntitledCore
import Foundation
import Testing

@testable import EntitledStorage

@Suite struct GroupCommitTests {
    @Test func writersThatArriveDuringASyncShareTheNextOneInsteadOfPayingOneEach() throws {
        let directory = NSTemporaryDirectory() + "/group-commit-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        // Hold the first sync open until all fifty writers have recorded their change.
        let firstSyncStarted = DispatchSemaphore(value: 0)
        let releaseFirstSync = DispatchSemaphore(value: 0)
        let syncs = NSLock()
        nonisolated(unsafe) var syncCount = 0
        let log = LogWriter(directory: directory, policy: .always, logger: .init(label: "test"), beforeSync: {
            let first = syncs.withLock { syncCount += 1; return syncCount == 1 }
            if first {
                firstSyncStarted.signal()
                releaseFirstSync.wait()
            }
        })
        try log.start(nextSequence: 1)
        let store = EntitlementStore(journal: log)

        let acknowledged = DispatchGroup()
        _ = try store.grant(Grant(subject: .user("first"), productId: "p")).value
        acknowledged.enter()
        log.whenAcknowledged(1) { _ in acknowledged.leave() }
        #expect(firstSyncStarted.wait(timeout: .now() + 10) == .success)

        // Fifty concurrent writers while that sync is running.
        DispatchQueue.concurrentPerform(iterations: 50) { writer in
            let recorded = try! store.grant(Grant(subject: .user("writer-\(writer)"), productId: "p"))
            acknowledged.enter()
            log.whenAcknowledged(recorded.sequence) { result in
                if case .failure(let error) = result { Issue.record("write failed: \(error)") }
                acknowledged.leave()
            }
        }
        releaseFirstSync.signal()
        #expect(acknowledged.wait(timeout: .now() + 10) == .success)

        // One sync for the first write, one shared by all fifty that arrived during it.
        #expect(log.statistics.syncs == 2)
        #expect(log.statistics.records == 51)
        #expect(log.acknowledgedSequence == 51)

        // What `stats` reports of it: two groups, of one and fifty, and the fifty waited at least as long
        // as the first sync was held open.
        let group = log.statistics.groupCommit
        #expect(group.groups == 2)
        #expect(group.changes == 51)
        #expect(group.largestGroup == 50)
        #expect(group.meanGroupSize == 25.5)
        #expect(group.longestSyncNanoseconds > 0)
        #expect(group.longestWaitNanoseconds >= group.longestSyncNanoseconds)
        #expect(group.oldestWaitNanoseconds >= group.longestWaitNanoseconds)
        log.close()
    }

    @Test func aLoopThatFindsTheLogBeingWrittenHandsItsCommitOffAndIsCounted() throws {
        let directory = NSTemporaryDirectory() + "/group-commit-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let syncStarted = DispatchSemaphore(value: 0)
        let releaseSync = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var held = false
        let log = LogWriter(directory: directory, policy: .always, logger: .init(label: "test"), beforeSync: {
            if !held {
                held = true
                syncStarted.signal()
                releaseSync.wait()
            }
        })
        try log.start(nextSequence: 1)
        let store = EntitlementStore(journal: log)
        let first = try store.grant(Grant(subject: .user("first"), productId: "p")).sequence
        let committer = Thread { _ = log.commitIfIdle(through: first) }
        committer.start()
        #expect(syncStarted.wait(timeout: .now() + 10) == .success)

        // The log is being written by the other thread: this commit does not wait for it.
        let second = try store.grant(Grant(subject: .user("second"), productId: "p")).sequence
        #expect(log.commitIfIdle(through: second) == nil)
        #expect(log.statistics.groupCommit.handedOff == 1)
        let acknowledged = DispatchSemaphore(value: 0)
        log.whenAcknowledged(second) { _ in acknowledged.signal() }
        releaseSync.signal()
        #expect(acknowledged.wait(timeout: .now() + 10) == .success)
        #expect(log.statistics.groupCommit.changes == 2)
        log.close()
    }
}
