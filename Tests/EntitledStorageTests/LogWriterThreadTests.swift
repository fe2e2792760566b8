import EntitledCore
import Foundation
import Testing

@testable import EntitledStorage

/// The log's writer thread: asleep while there is nothing to write, awake when a record needs it.
@Suite struct LogWriterThreadTests {
    @Test func anIdleLogsWriterThreadSleepsInsteadOfWakingOnATimer() throws {
        try withScratchDirectory { directory in
            let log = LogWriter(directory: directory, policy: .always)
            try log.start(nextSequence: 1)
            defer { log.close() }
            let before = log.statistics.writerWakeUps
            Thread.sleep(forTimeInterval: 0.3)
            // A 5 ms timer would have woken it about 60 times.
            #expect(log.statistics.writerWakeUps - before <= 1)
        }
    }

    @Test func aRecordNobodyCommitsAfterAQuietSpellIsStillWrittenAndSynced() throws {
        try withScratchDirectory { directory in
            let log = LogWriter(directory: directory, policy: .always)
            try log.start(nextSequence: 1)
            defer { log.close() }
            let store = EntitlementStore(journal: log)
            Thread.sleep(forTimeInterval: 0.05)  // the writer thread is asleep with nothing to do

            // Recorded, and neither committed nor waited for: only the writer thread can write it.
            _ = try store.grant(Grant(subject: .user("quiet"), productId: "p"))
            // A generous deadline: the writer thread may get its turn late on a machine busy with the suite.
            let deadline = Date().addingTimeInterval(30)
            while log.acknowledgedSequence < 1, Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
            #expect(log.acknowledgedSequence == 1)
            #expect(log.statistics.syncs == 1)
        }
    }

    @Test func anEverysecLogsWriterThreadSyncsItsLastWriteAndThenSleeps() throws {
        try withScratchDirectory { directory in
            let log = LogWriter(directory: directory, policy: .everysec)
            try log.start(nextSequence: 1)
            defer { log.close() }
            let store = EntitlementStore(journal: log)
            _ = try store.grant(Grant(subject: .user("later"), productId: "p"))

            // Written to the OS at once (acknowledged), synced within the second.
            let deadline = Date().addingTimeInterval(30)  // generous, as above
            while log.statistics.syncs < 1, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            #expect(log.statistics.syncs == 1)
            let afterSync = log.statistics.writerWakeUps
            Thread.sleep(forTimeInterval: 0.3)
            #expect(log.statistics.writerWakeUps - afterSync <= 1)
        }
    }
}
