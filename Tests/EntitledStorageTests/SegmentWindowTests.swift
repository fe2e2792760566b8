import EntitledCore
import Foundation
import Testing

@testable import EntitledStorage

/// A log segment is read a window at a time (`SegmentWindow`), so that its memory does not grow with the
/// file: whatever the window's size, a scan finds exactly what reading the file whole found (records,
/// their offsets, a torn tail, unused space, damage), and a cut counts the same records.
@Suite struct SegmentWindowTests {
    static let segment = DataDirectoryInspectorTests.firstSegment
    /// Windows smaller than a record, about one, and a few: every frame boundary meets a window's end.
    static let capacities = [64, 100, 257, 1000, 4096]

    /// What a scan found, comparable.
    struct Found: Equatable {
        var records: [LoggedChange]
        var offsets: [Int]
        var torn: Int?
        var tornBytes: Int
        var unused: Int?
        var length: Int
        var damage: StorageError?
        var damagedRecord: Int?

        init(_ scan: LogSegmentScan) {
            records = scan.records
            offsets = scan.recordOffsets
            torn = scan.tornTailOffset
            tornBytes = scan.tornBytes
            unused = scan.unusedTailOffset
            length = scan.fileLength
            damage = scan.damage?.error
            damagedRecord = scan.damage?.recordOffset
        }
    }

    /// The segments the scan must agree on: intact, with zeros after the records, cut inside the last
    /// record, with a byte flipped in a middle record, and with zeros and then data after the records.
    static func variants() -> [(name: String, bytes: [UInt8])] {
        let (bytes, starts) = LogRecordFramesTests.segment(records: 40)
        var flipped = bytes
        flipped[starts[20] + 15] ^= 0x5A
        return [
            ("intact", bytes),
            ("unused space", bytes + [UInt8](repeating: 0, count: 3000)),
            ("torn", Array(bytes[..<(starts[39] + 20)])),
            ("damaged", flipped),
            ("zeros then data", bytes + [UInt8](repeating: 0, count: 2000) + [7, 7, 7]),
        ]
    }

    @Test(arguments: capacities)
    func everyWindowSizeFindsWhatTheDefaultWindowFinds(capacity: Int) throws {
        try withScratchDirectory { directory in
            let path = directory + "/" + Self.segment
            for (name, bytes) in Self.variants() {
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                let whole = Found(try LogSegmentScan.upToDamage(path: path, file: Self.segment))
                let windowed = Found(try LogSegmentScan.upToDamage(path: path, file: Self.segment, windowCapacity: capacity))
                #expect(windowed == whole, "\(name)")
                #expect(!whole.records.isEmpty, "\(name)")
                let counted = bytes.withUnsafeBytes { LogRecordFrames($0).estimatedRecordCount(from: LogFormat.segmentHeaderLength) }
                var window = try SegmentWindow(path: path, capacity: capacity)
                #expect(try window.estimatedRecordCount(from: LogFormat.segmentHeaderLength) == counted, "\(name)")
            }
        }
    }

    @Test(arguments: capacities)
    func aReplayInSmallWindowsGetsEveryRecordInOrderAndReservesForEveryCreation(capacity: Int) throws {
        try withScratchDirectory { directory in
            _ = try DataDirectoryInspectorTests.History.write(changes: 30, in: directory)
            let path = directory + "/" + Self.segment
            let full = try LogSegmentScan(path: path, file: Self.segment)
            var handed: [LoggedChange] = []
            var reserved: [Int] = []
            _ = try LogSegmentScan.replaying(path: path, file: Self.segment, windowCapacity: capacity, reserve: { reserved.append($0) }) { batch in
                handed += batch.changes
            }
            #expect(handed == full.records)
            #expect(reserved == [full.records.count { if case .create = $0.change { true } else { false } }])
        }
    }

    @Test func aRecordLargerThanTheWindowIsReadWhole() throws {
        try withScratchDirectory { directory in
            // A define of ten 1 MiB product names: a 10 MiB record, more than the standard 8 MiB window.
            var bytes = LogFormat.segmentHeader(firstSequence: 1)
            let context = ChangeContext(recordedAt: Timestamp(millisecondsSinceEpoch: 1_700_000_000_000))
            let large = StoreChange.define(entitlement: "large", products: (0..<10).map { String(repeating: "\($0)", count: 1 << 20) })
            LogFormat.appendRecord(LoggedChange(sequence: 1, change: large, context: context), to: &bytes)
            LogFormat.appendRecord(LoggedChange(sequence: 2, change: .define(entitlement: "small", products: ["p"]), context: context), to: &bytes)
            #expect(bytes.count > SegmentWindow.standardCapacity)
            let path = directory + "/" + Self.segment
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let scan = try LogSegmentScan(path: path, file: Self.segment)
            #expect(scan.records.map(\.sequence) == [1, 2])
            #expect(scan.records.first?.change == large)
            #expect(scan.tornTailOffset == nil && scan.unusedTailOffset == nil)
        }
    }

    @Test func aSparseSegmentOfGigabytesIsReadAsItsRecordsAndUnusedSpace() throws {
        try withScratchDirectory { directory in
            let history = try DataDirectoryInspectorTests.History.write(changes: 5, in: directory)
            let path = directory + "/" + Self.segment
            let records = try #require(history.segmentSizes.last)
            #expect(truncate(path, 6 << 30) == 0)
            let scan = try LogSegmentScan(path: path, file: Self.segment)
            #expect(scan.records.count == 5)
            #expect(scan.unusedTailOffset == records)
            #expect(scan.unusedBytes == (6 << 30) - records)
            var window = try SegmentWindow(path: path)
            #expect(try window.estimatedRecordCount(from: records) == 0)
        }
    }

    @Test func aSymbolicLinkNamedAsASegmentIsRefusedNotFollowed() throws {
        try withScratchDirectory { directory in
            _ = try DataDirectoryInspectorTests.History.write(changes: 3, in: directory)
            let outside = directory + "/outside"
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: outside))
            let link = directory + "/" + LogFormat.segmentName(firstSequence: 4)
            #expect(symlink(outside, link) == 0)
            #expect(throws: StorageError.notARegularFile(path: link, kind: "a symbolic link")) {
                _ = try DurableStore(directory: directory)
            }
            #expect(try String(contentsOfFile: outside, encoding: .utf8) == "keep me")
        }
    }

    @Test func aLockFileThatIsAFIFOIsRefused() throws {
        try withScratchDirectory { directory in
            #expect(mkfifo(directory + "/LOCK", 0o600) == 0)
            #expect(throws: StorageError.notARegularFile(path: directory + "/LOCK", kind: "a FIFO")) {
                _ = try DurableStore(directory: directory)
            }
        }
    }

    @Test func aSnapshotThatIsADirectoryIsRefusedByName() throws {
        try withScratchDirectory { directory in
            let snapshot = directory + "/" + SnapshotFormat.fileName(sequence: 7)
            try FileManager.default.createDirectory(atPath: snapshot, withIntermediateDirectories: false)
            #expect(throws: StorageError.notARegularFile(path: snapshot, kind: "a directory")) {
                _ = try DurableStore(directory: directory)
            }
        }
    }

    @Test func aStopAskedForWhileLoadingEndsTheLoadAndReleasesTheDirectory() throws {
        try withScratchDirectory { directory in
            _ = try DataDirectoryInspectorTests.History.write(changes: 10, in: directory)
            let progress = LoadingProgress()
            progress.requestStop()
            #expect(throws: StorageError.loadingStopped) {
                _ = try DurableStore(directory: directory, progress: progress)
            }
            // The lock is released: a new start loads everything.
            let durable = try DurableStore(directory: directory)
            #expect(durable.store.sequence == 10)
            durable.close()
        }
    }
}
