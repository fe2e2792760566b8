import EntitledCore
import Foundation
import Testing

@testable import EntitledStorage

/// A restart replays a log segment batch by batch as it is decoded (`LogSegmentScan.replaying`), on real
/// segments written by `DurableStore`: the batches are the records a full scan keeps, in order; damage
/// after some batches throws what a full scan throws, once the batches before it were handed over; an
/// error of the replay ends the scan.
@Suite struct ReplayBatchTests {
    typealias History = DataDirectoryInspectorTests.History
    static let segment = DataDirectoryInspectorTests.firstSegment

    /// The batches of `path` handed over with `batchSize`, and the creations reserved for.
    private func batches(_ path: String, batchSize: Int) -> (batches: [LogSegmentScan.Batch], reserved: [Int], error: StorageError?) {
        var handed: [LogSegmentScan.Batch] = []
        var reserved: [Int] = []
        do throws(StorageError) {
            _ = try LogSegmentScan.replaying(path: path, file: Self.segment, batchSize: batchSize, reserve: { reserved.append($0) }) { batch in
                handed.append(batch)
            }
            return (handed, reserved, nil)
        } catch {
            return (handed, reserved, error)
        }
    }

    @Test(arguments: [1, 2, 3, 7, 100])
    func theBatchesAreTheRecordsAFullScanKeepsInOrder(batchSize: Int) throws {
        try withScratchDirectory { directory in
            _ = try History.write(changes: 12, in: directory)
            let path = directory + "/" + Self.segment
            let full = try LogSegmentScan(path: path, file: Self.segment)
            let (handed, reserved, error) = batches(path, batchSize: batchSize)
            #expect(error == nil)
            #expect(handed.allSatisfy { !$0.changes.isEmpty && $0.changes.count <= batchSize && $0.changes.count == $0.recordStarts.count })
            #expect(handed.flatMap(\.changes) == full.records)
            #expect(handed.flatMap(\.recordStarts) == full.recordOffsets)
            let creations = full.records.count { if case .create = $0.change { true } else { false } }
            #expect(reserved == [creations])
            #expect(creations > 0)
        }
    }

    @Test func damageAfterSomeBatchesThrowsWhatAFullScanThrowsOnceTheBatchesBeforeItAreHandedOver() throws {
        try withScratchDirectory { directory in
            let history = try History.write(changes: 9, in: directory)
            let path = directory + "/" + Self.segment
            // A byte inside record 6's payload.
            try DataDirectoryInspectorTests().flipByte(at: history.segmentSizes[5] + 12 + 10, in: path)
            var thrown: StorageError?
            do throws(StorageError) {
                _ = try LogSegmentScan(path: path, file: Self.segment)
            } catch {
                thrown = error
            }
            let (handed, _, error) = batches(path, batchSize: 2)
            #expect(error != nil)
            #expect(error == thrown)
            #expect(handed.flatMap(\.changes).map(\.sequence) == [1, 2, 3, 4, 5])
        }
    }

    @Test func anErrorOfTheReplayEndsTheScanAndIsThrown() throws {
        try withScratchDirectory { directory in
            _ = try History.write(changes: 9, in: directory)
            var handed = 0
            do throws(StorageError) {
                _ = try LogSegmentScan.replaying(path: directory + "/" + Self.segment, file: Self.segment, batchSize: 2, reserve: { _ in }) { _ throws(StorageError) in
                    handed += 1
                    if handed == 2 { throw .brokenHistory("the replay refused the second batch") }
                }
                Issue.record("the replay's error was not thrown")
            } catch {
                #expect(error == .brokenHistory("the replay refused the second batch"))
            }
            #expect(handed == 2)
        }
    }
}
