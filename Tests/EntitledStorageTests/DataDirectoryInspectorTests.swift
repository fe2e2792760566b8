import EntitledCore
import Foundation
import Testing

@testable import EntitledStorage

/// `DataDirectoryInspector` on real data directories written by `DurableStore` and then damaged by hand.
@Suite struct DataDirectoryInspectorTests {
    static let firstSegment = "log-00000000000000000001.wal"

    // MARK: verify

    @Test func verifyReportsAnEmptyDirectoryAsOkWithNothingToRecover() throws {
        try withScratchDirectory { directory in
            let report = DataDirectoryInspector.verify(directory: directory)
            #expect(report.verdict == .ok)
            #expect(report.files.isEmpty)
            #expect(report.recoveredSequence == 0)
        }
    }

    @Test func verifyReportsAnIntactDirectoryAsOkWithEveryRecordOfTheSegment() throws {
        try withScratchDirectory { directory in
            let history = try History.write(changes: 9, in: directory)
            let report = DataDirectoryInspector.verify(directory: directory)
            #expect(report.verdict == .ok, "\(report)")
            #expect(report.recoveredSequence == 9)
            #expect(report.recoveredMembershipCount == history.membershipCount)
            let segment = try #require(report.files.first { $0.name == Self.firstSegment })
            #expect(segment.kind == .logSegment)
            #expect(segment.status == .ok)
            #expect(segment.recordCount == 9)
            #expect(segment.firstSequence == 1)
            #expect(segment.lastSequence == 9)
            #expect(segment.size == history.segmentSizes[9])
        }
    }

    @Test func verifyReportsATornLastRecordAsOkWithTornTailWhereTheServerDropsItAndChangesNothing() throws {
        try withScratchDirectory { directory in
            let history = try History.write(changes: 6, in: directory)
            let path = directory + "/" + Self.firstSegment
            try truncateFile(path, to: history.segmentSizes[6] - 5)
            let before = try contents(of: directory)

            let report = DataDirectoryInspector.verify(directory: directory)
            #expect(report.verdict == .okWithTornTail, "\(report)")
            let segment = try #require(report.files.first { $0.name == Self.firstSegment })
            let lastRecord = history.segmentSizes[5]
            #expect(segment.status == .tornTail(offset: lastRecord, bytes: history.segmentSizes[6] - 5 - lastRecord))
            #expect(segment.recordCount == 5)
            #expect(report.recoveredSequence == 5)
            #expect(try contents(of: directory) == before, "verify must not change the directory")

            // The server agrees: it drops the same bytes and starts with the five records before them.
            let reopened = try DurableStore(directory: directory, policy: .always)
            defer { reopened.close() }
            #expect(reopened.store.sequence == 5)
            #expect(reopened.recovery.droppedTornTail?.offset == lastRecord)
        }
    }

    @Test(arguments: [DamagedPart.recordHeader, .payload])
    func verifyReportsAFlippedByteInTheMiddleOfASegmentAsDamagedAtTheOffsetTheServerNames(part: DamagedPart) throws {
        try withScratchDirectory { directory in
            let history = try History.write(changes: 10, in: directory)
            let recordStart = history.segmentSizes[4]  // record 5
            try flipByte(at: recordStart + part.offsetInRecord, in: directory + "/" + Self.firstSegment)

            let report = DataDirectoryInspector.verify(directory: directory)
            #expect(report.verdict == .damaged, "\(report)")
            #expect(report.recoveredSequence == nil)
            let segment = try #require(report.files.first { $0.name == Self.firstSegment })
            guard case .corrupt(let offset, _) = segment.status else {
                Issue.record("expected a corrupt segment, got \(segment.status)")
                return
            }
            // A damaged header is reported where the record starts, a damaged payload where the payload does.
            #expect(offset == recordStart + part.reportedOffsetInRecord)
            #expect(segment.recordCount == 4)
            #expect(segment.lastSequence == 4)

            let serverError = openingError(directory)
            #expect(serverError.flatMap(corruptionOffset) == offset, "\(String(describing: serverError))")
        }
    }

    @Test func verifyReportsAFlippedByteInASnapshotAsDamagedAtTheBody() throws {
        try withScratchDirectory { directory in
            let durable = try DurableStore(directory: directory, policy: .always)
            try History.apply(changes: 8, to: durable)
            let snapshot = try durable.snapshot()
            durable.close()
            try flipByte(at: snapshot.bytes / 2, in: directory + "/" + snapshot.file)

            let report = DataDirectoryInspector.verify(directory: directory)
            #expect(report.verdict == .damaged, "\(report)")
            let file = try #require(report.files.first { $0.name == snapshot.file })
            #expect(file.kind == .snapshot)
            guard case .corrupt(let offset, let problem) = file.status else {
                Issue.record("expected a corrupt snapshot, got \(file.status)")
                return
            }
            #expect(offset == 40)
            #expect(problem.contains("checksum"))

            guard case .corruptSnapshot(let serverFile, let serverOffset, _) = openingError(directory) else {
                Issue.record("the server should refuse the snapshot too")
                return
            }
            #expect(serverFile == snapshot.file)
            #expect(serverOffset == offset)
        }
    }

    @Test func verifyReportsALogFileMissingAfterTheSnapshotAsABrokenHistory() throws {
        try withScratchDirectory { directory in
            let durable = try DurableStore(directory: directory, policy: .always)
            try History.apply(changes: 3, to: durable)
            let snapshot = try durable.snapshot()
            try History.apply(changes: 3, to: durable, startingAt: 3)
            durable.close()
            // The snapshot covered changes 1-3 and removed their log; without it, change 4 follows nothing.
            try FileManager.default.removeItem(atPath: directory + "/" + snapshot.file)

            let report = DataDirectoryInspector.verify(directory: directory)
            #expect(report.verdict == .damaged, "\(report)")
            let segment = try #require(report.files.first { $0.name == "log-00000000000000000004.wal" })
            #expect(segment.status.isDamage)
            guard case .brokenHistory(let offset, _) = segment.status else {
                Issue.record("expected a broken history, got \(segment.status)")
                return
            }
            #expect(offset == 28)
            guard case .brokenHistory = openingError(directory) else {
                Issue.record("the server should refuse the gap too")
                return
            }
        }
    }

    // MARK: cut-log

    @Test(arguments: [DamagedPart.recordHeader, .payload])
    func cutLogCutsAMidLogCorruptionBackToTheLastGoodRecordAndTheStoreOpensWithTheRecordsBeforeIt(part: DamagedPart) throws {
        try withScratchDirectory { directory in
            let history = try History.write(changes: 12, in: directory, dumpAfter: 6)
            let path = directory + "/" + Self.firstSegment
            let recordStart = history.segmentSizes[6]  // record 7
            try flipByte(at: recordStart + part.offsetInRecord, in: path)

            let cut = try DataDirectoryInspector.cutLog(directory: directory, file: Self.firstSegment)
            #expect(cut.changed)
            #expect(cut.cutOffset == recordStart)
            #expect(cut.droppedBytes == history.segmentSizes[12] - recordStart)
            #expect(cut.droppedRecords == 6)
            #expect(cut.keptRecords == 6)
            #expect(cut.lastGoodSequence == 6)
            #expect(cut.verdictAfterCut == .ok)
            #expect(FileManager.default.fileExists(atPath: path))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == recordStart)
            #expect(DataDirectoryInspector.verify(directory: directory).verdict == .ok)

            let reopened = try DurableStore(directory: directory, policy: .always)
            defer { reopened.close() }
            #expect(reopened.store.sequence == 6)
            #expect(History.dump(reopened.store) == history.dump)
        }
    }

    @Test func cutLogCutsATornTailBackToTheLastCompleteRecord() throws {
        try withScratchDirectory { directory in
            let history = try History.write(changes: 4, in: directory)
            let path = directory + "/" + Self.firstSegment
            try truncateFile(path, to: history.segmentSizes[4] - 3)

            let cut = try DataDirectoryInspector.cutLog(directory: directory, file: path)
            #expect(cut.changed)
            #expect(cut.cutOffset == history.segmentSizes[3])
            #expect(cut.droppedRecords == 1)
            #expect(cut.lastGoodSequence == 3)
            #expect(DataDirectoryInspector.verify(directory: directory).verdict == .ok)
        }
    }

    @Test func cutLogRefusesWhileADurableStoreHoldsTheDirectory() throws {
        try withScratchDirectory { directory in
            let durable = try DurableStore(directory: directory, policy: .always)
            defer { durable.close() }
            try History.apply(changes: 3, to: durable)
            let path = directory + "/" + Self.firstSegment
            // The records only: the live log's preallocator goes on appending zeros after them on a thread
            // of its own (its first step right after the segment opened), so the file's length and tail
            // may change at any moment while the store holds it. On a loaded machine that step ran between
            // two whole-file reads here and the test failed; a cut would shorten the records, which is
            // what must not happen.
            let recordsEnd = try #require(durable.log.currentSegmentLength)
            let before = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(recordsEnd)

            let error = storageError { () throws(StorageError) in
                _ = try DataDirectoryInspector.cutLog(directory: directory, file: Self.firstSegment)
            }
            guard case .locked = error else {
                Issue.record("expected the lock to refuse, got \(String(describing: error))")
                return
            }
            let after = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(after.count >= recordsEnd)
            #expect(after.prefix(recordsEnd) == before)
        }
    }

    @Test func cutLogLeavesAnIntactSegmentUnchangedAndSaysSo() throws {
        try withScratchDirectory { directory in
            _ = try History.write(changes: 5, in: directory)
            let path = directory + "/" + Self.firstSegment
            let before = try Data(contentsOf: URL(fileURLWithPath: path))

            let cut = try DataDirectoryInspector.cutLog(directory: directory, file: Self.firstSegment)
            #expect(!cut.changed)
            #expect(cut.droppedBytes == 0)
            #expect(cut.droppedRecords == 0)
            #expect(cut.keptRecords == 5)
            #expect(cut.lastGoodSequence == 5)
            #expect(cut.cutOffset == cut.originalSize)
            #expect(cut.damage == nil)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        }
    }

    @Test func cutLogRefusesAFileThatIsNotALogSegmentOfTheDirectory() throws {
        try withScratchDirectory { directory in
            try withScratchDirectory { other in
                _ = try History.write(changes: 2, in: directory)
                _ = try History.write(changes: 2, in: other)
                let otherSegment = other + "/" + Self.firstSegment
                let otherBefore = try Data(contentsOf: URL(fileURLWithPath: otherSegment))
                try Data("notes".utf8).write(to: URL(fileURLWithPath: directory + "/notes.txt"))

                for file in ["LOCK", "notes.txt", "log-00000000000000000099.wal", "log-1.wal", otherSegment, "../" + Self.firstSegment] {
                    let error = storageError { () throws(StorageError) in
                        _ = try DataDirectoryInspector.cutLog(directory: directory, file: file)
                    }
                    #expect(error != nil, "cut-log accepted \(file)")
                }
                #expect(try Data(contentsOf: URL(fileURLWithPath: otherSegment)) == otherBefore)
            }
        }
    }

    // MARK: The specification

    /// The worked example of Protocol/STORAGE.md, "Worked example": a segment header and one create record.
    @Test func theWorkedExampleOfTheStorageSpecificationIsWhatTheEncoderWrites() {
        let expected = """
            45 4e 54 4c 44 4c 4f 47 07 00 00 00 00 00 00 00
            01 00 00 00 00 00 00 00 8d 4f 30 44 55 00 00 00
            23 3f 66 e5 f4 06 ad 2d 01 00 00 00 00 00 00 00
            01 00 f4 51 c2 8c 01 00 00 05 00 00 00 6c 6f 63
            61 6c 00 11 00 00 00 6d 65 6d 5f 30 6b 33 6e 35
            71 38 72 32 74 34 76 36 03 00 00 00 70 72 6f 00
            00 01 02 00 00 00 75 31 00 f4 51 c2 8c 01 00 00
            01 00 18 f7 61 8d 01 00 00 03 00 00 00
            """
            .split(whereSeparator: \.isWhitespace).map { UInt8($0, radix: 16)! }
        var bytes = LogFormat.segmentHeader(firstSequence: 1)
        let context = ChangeContext(recordedAt: Self.workedExampleMembership.createdAt)
        let change = StoreChange.create(Self.workedExampleMembership, idempotencyKey: nil)
        LogFormat.appendRecord(LoggedChange(sequence: 1, change: change, context: context), to: &bytes)
        #expect(bytes == expected)
    }

    /// The same record as format version 1 wrote it (STORAGE.md §10): still read, dated by its creation.
    @Test func aVersion1SegmentOfTheWorkedExampleIsStillRead() throws {
        let version1 = """
            45 4e 54 4c 44 4c 4f 47 01 00 00 00 00 00 00 00
            01 00 00 00 00 00 00 00 6b 8e c0 63 41 00 00 00
            16 ca e8 e3 2b 7b 62 df 01 00 00 00 00 00 00 00
            01 11 00 00 00 6d 65 6d 5f 30 6b 33 6e 35 71 38
            72 32 74 34 76 36 03 00 00 00 70 72 6f 00 00 01
            02 00 00 00 75 31 00 f4 51 c2 8c 01 00 00 01 00
            18 f7 61 8d 01 00 00 03 00
            """
            .split(whereSeparator: \.isWhitespace).map { UInt8($0, radix: 16)! }
        try withScratchDirectory { directory in
            let path = directory + "/" + Self.firstSegment
            try Data(version1).write(to: URL(fileURLWithPath: path))
            let scan = try LogSegmentScan(path: path, file: Self.firstSegment)
            #expect(scan.records == [
                LoggedChange(
                    sequence: 1, change: .create(Self.workedExampleMembership, idempotencyKey: nil),
                    context: ChangeContext(recordedAt: Self.workedExampleMembership.createdAt)
                )
            ])
        }
    }

    static let workedExampleMembership = Membership(
        id: MembershipID(rawValue: "mem_0k3n5q8r2t4v6"), productId: "pro", user: "u1",
        createdAt: Timestamp(millisecondsSinceEpoch: 1_704_067_200_000),
        expiresAt: Timestamp(millisecondsSinceEpoch: 1_706_745_600_000), source: .stripe
    )
}

// MARK: Support

extension DataDirectoryInspectorTests {
    enum DamagedPart: CustomTestStringConvertible, Sendable {
        /// A byte of the record's length field.
        case recordHeader
        /// A byte in the middle of the payload.
        case payload

        var offsetInRecord: Int { self == .recordHeader ? 1 : 12 + 10 }
        /// Where `LogSegmentScan` reports the damage, relative to the record's start.
        var reportedOffsetInRecord: Int { self == .recordHeader ? 0 : 12 }
        var testDescription: String { self == .recordHeader ? "record header" : "payload" }
    }

    /// A history of every kind of change written through a `DurableStore` with `--fsync always`.
    struct History {
        /// The segment's size before any record (index 0) and after each change (index n).
        var segmentSizes: [Int]
        var membershipCount: Int
        /// The state after the change `dumpAfter`, if asked.
        var dump: [String]?

        static func write(changes: Int, in directory: String, dumpAfter: Int? = nil) throws -> History {
            let durable = try DurableStore(directory: directory, policy: .always)
            // Where the records end, not the file's size: the log keeps zeros after its records.
            var sizes = [try #require(durable.log.currentSegmentLength)]
            var dump: [String]?
            for index in 0..<changes {
                try apply(changes: 1, to: durable, startingAt: index)
                sizes.append(try #require(durable.log.currentSegmentLength))
                if index + 1 == dumpAfter { dump = Self.dump(durable.store) }
            }
            let count = durable.store.membershipCount
            durable.close()
            return History(segmentSizes: sizes, membershipCount: count, dump: dump)
        }

        /// Applies changes number `start + 1` ... `start + changes` of a fixed pattern (define, grant to a
        /// user, grant to a device, claim, revoke), each making exactly one record, and waits until the log
        /// holds them.
        static func apply(changes: Int, to durable: DurableStore, startingAt start: Int = 0) throws {
            let store = durable.store
            for index in start..<(start + changes) {
                switch index % 5 {
                case 0: try store.define(entitlement: "e\(index)", products: ["p\(index)", "p\(index + 1)"])
                case 1: _ = try store.grant(Grant(subject: .user("u\(index)"), productId: "p\(index)", planId: "monthly", source: .stripe))
                case 2: _ = try store.grant(Grant(subject: .device("d\(index)"), productId: "p\(index)", expiry: .after(TimeSpan(milliseconds: 60_000))))
                case 3: _ = try store.claim(device: "d\(index - 1)", user: "u\(index)")
                default:
                    let granted = try #require(store.memberships(visibleTo: .user("u\(index - 3)")).first)
                    _ = try store.revoke(granted.id, reason: "refund")
                }
            }
            let deadline = ContinuousClock.now + .seconds(10)
            while durable.log.acknowledgedSequence < store.sequence {
                try #require(ContinuousClock.now < deadline, "the log did not acknowledge change \(store.sequence)")
                Thread.sleep(forTimeInterval: 0.001)
            }
        }

        /// Every membership every subject of the pattern sees, and the catalog.
        static func dump(_ store: EntitlementStore) -> [String] {
            var lines: [String] = []
            for index in 0..<50 {
                for subject in [Subject.user("u\(index)"), .device("d\(index)")] {
                    lines += store.memberships(visibleTo: subject).map { "\(subject): \($0)" }
                }
            }
            lines += store.catalog().map { "\($0.entitlement)=\($0.products.joined(separator: ","))" }
            return lines
        }
    }

    func flipByte(at offset: Int, in path: String) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: Data([byte ^ 0x5A]))
    }

    func truncateFile(_ path: String, to length: Int) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(length))
    }

    /// Every file of `directory` (but the lock) with its bytes.
    func contents(of directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name != "LOCK" {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return files
    }

    func storageError(_ body: () throws(StorageError) -> Void) -> StorageError? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    /// Why a `DurableStore` refuses to open `directory`, or `nil` if it opens.
    func openingError(_ directory: String) -> StorageError? {
        storageError { () throws(StorageError) in
            let durable = try DurableStore(directory: directory, policy: .always)
            durable.close()
        }
    }

    func corruptionOffset(_ error: StorageError) -> Int? {
        switch error {
        case .corruptLog(_, let offset, _), .corruptSnapshot(_, let offset, _): return offset
        default: return nil
        }
    }
}
