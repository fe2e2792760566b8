import EntitledCore
import Foundation
import Logging
import Testing

@testable import EntitledStorage

/// With `--fsync always` the log keeps zeros on disk ahead of its records (`SegmentPreallocator`): real
/// data directories, written by `DurableStore`, copied while open (what a crash leaves) and damaged by hand.
@Suite struct LogPreallocationTests {
    typealias History = DataDirectoryInspectorTests.History
    static let segment = DataDirectoryInspectorTests.firstSegment

    @Test func theLogKeepsZerosAheadOfItsRecordsAndCutsThemOffWhenItCloses() throws {
        try withScratchDirectory { directory in
            let durable = try DurableStore(directory: directory, policy: .always)
            try History.apply(changes: 40, to: durable)
            let end = try #require(durable.log.currentSegmentLength)
            let path = directory + "/" + Self.segment
            let bytes = try fileBytes(path)
            #expect(bytes.count >= end + SegmentPreallocator.Tuning.standard.minimumAhead / 2, "only \(bytes.count - end) bytes prepared")
            #expect(bytes[end...].allSatisfy { $0 == 0 })
            // The steps run on the preallocator's own thread, after the segment opened with 64 KiB, below
            // the 128 KiB minimum: one is due at once, but on a loaded machine it may not have run yet when
            // the records are acknowledged. Wait for it (it is certain to come) rather than for luck.
            let deadline = ContinuousClock.now + .seconds(30)
            while (durable.log.preallocationStatistics?.steps ?? 0) < 1, ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.005)
            }
            #expect((durable.log.preallocationStatistics?.steps ?? 0) >= 1)
            durable.close()

            #expect(FileSystem.fileSize(path) == end)
            let reopened = try DurableStore(directory: directory, policy: .always)
            defer { reopened.close() }
            #expect(reopened.store.sequence == 40)
            #expect(reopened.recovery.droppedTornTail == nil)
        }
    }

    @Test func otherPoliciesWriteNoZeros() throws {
        try withScratchDirectory { directory in
            let durable = try DurableStore(directory: directory, policy: .everysec)
            defer { durable.close() }
            try History.apply(changes: 10, to: durable)
            #expect(durable.log.preallocationStatistics == nil)
            #expect(FileSystem.fileSize(directory + "/" + Self.segment) == durable.log.currentSegmentLength)
        }
    }

    @Test func aCrashLeavesZerosAfterTheRecordsWhichRecoveryCutsWithoutDroppingAnything() throws {
        try withScratchDirectory { directory in
            let durable = try DurableStore(directory: directory, policy: .always)
            defer { durable.close() }
            try History.apply(changes: 25, to: durable, startingAt: 0)
            let end = try #require(durable.log.currentSegmentLength)
            let crashed = directory + "/crashed"
            try copyDataFiles(from: directory, to: crashed)  // the files as a kill -9 leaves them
            #expect((FileSystem.fileSize(crashed + "/" + Self.segment) ?? 0) > end)

            let report = DataDirectoryInspector.verify(directory: crashed)
            #expect(report.verdict == .ok, "\(report)")
            #expect(report.recoveredSequence == 25)
            let entry = try #require(report.files.first { $0.name == Self.segment })
            let unused = (try #require(FileSystem.fileSize(crashed + "/" + Self.segment))) - end
            #expect(entry.note == .unusedSpace(offset: end, bytes: unused, trimmedAtStart: true), "\(entry)")

            let recovered = try DurableStore(directory: crashed, policy: .always)
            defer { recovered.close() }
            #expect(recovered.store.sequence == 25)
            #expect(recovered.recovery.droppedTornTail == nil)
            #expect(FileSystem.fileSize(crashed + "/" + Self.segment) == end)
        }
    }

    @Test func aRecordWhoseSectorNeverReachedTheDiskIsDroppedAsTornWithEveryRecordAfterIt() throws {
        try withScratchDirectory { directory in
            let durable = try DurableStore(directory: directory, policy: .always)
            defer { durable.close() }
            var sizes = [try #require(durable.log.currentSegmentLength)]
            for index in 0..<30 {
                try History.apply(changes: 1, to: durable, startingAt: index)
                sizes.append(try #require(durable.log.currentSegmentLength))
            }
            // A record that crosses a sector boundary, with records after it: a crash during the write of
            // a batch holding it wrote the sector before the boundary and the sectors after the next one,
            // but not the one after the boundary.
            let sector = LogRecordFrames.sectorLength
            let torn = try #require((1..<(sizes.count - 2)).first { sizes[$0 - 1] / sector != (sizes[$0] - 1) / sector })
            let boundary = (sizes[torn] - 1) / sector * sector
            #expect(sizes.last! > boundary + sector, "records must follow the lost sector")
            let crashed = directory + "/crashed"
            try copyDataFiles(from: directory, to: crashed)
            try overwrite(crashed + "/" + Self.segment, at: boundary, with: [UInt8](repeating: 0, count: sector))

            let report = DataDirectoryInspector.verify(directory: crashed)
            #expect(report.verdict == .okWithTornTail, "\(report)")
            #expect(report.recoveredSequence == UInt64(torn - 1))

            let recovered = try DurableStore(directory: crashed, policy: .always)
            defer { recovered.close() }
            #expect(recovered.store.sequence == UInt64(torn - 1))
            #expect(recovered.recovery.droppedTornTail?.offset == sizes[torn - 1])
        }
    }

    @Test func aFlippedByteInTheLastRecordBeforeTheZerosIsDamageNotATornWrite() throws {
        try withScratchDirectory { directory in
            let durable = try DurableStore(directory: directory, policy: .always)
            defer { durable.close() }
            try History.apply(changes: 9, to: durable)
            let before = try #require(durable.log.currentSegmentLength)
            try History.apply(changes: 1, to: durable, startingAt: 9)
            let crashed = directory + "/crashed"
            try copyDataFiles(from: directory, to: crashed)
            let path = crashed + "/" + Self.segment
            let payload = before + LogFormat.recordHeaderLength
            try overwrite(path, at: payload + 3, with: [try fileBytes(path)[payload + 3] ^ 0x5A])

            let report = DataDirectoryInspector.verify(directory: crashed)
            #expect(report.verdict == .damaged, "\(report)")
            #expect(throws: StorageError.self) { try DurableStore(directory: crashed, policy: .always).close() }
        }
    }

    /// Many writers race the preallocator's steps, made tiny so that the log keeps outrunning them;
    /// whatever the interleaving, every record survives (zeros written over a record would lose it).
    @Test(arguments: [SegmentPreallocator.Tuning.standard, .tiny])
    func recordsWrittenWhileZerosArePreparedAreAllRecovered(tuning: SegmentPreallocator.Tuning) throws {
        try withScratchDirectory { directory in
            let durable = try DurableStore(
                directory: directory, policy: .always, clock: { Timestamp.now() }, logger: Logger(label: "test"),
                preallocation: tuning
            )
            let writers = 4
            let grantsEach = 2_500
            DispatchQueue.concurrentPerform(iterations: writers) { writer in
                for index in 0..<grantsEach {
                    let grant = Grant(
                        subject: .user("writer-\(writer)-user-\(index)"), productId: "prod_\(index % 7)",
                        planId: String(repeating: "p", count: 200), source: .stripe
                    )
                    _ = try? durable.store.grant(grant)
                    // As an event loop does: write and sync on this thread, so batches are small and
                    // frequent, and keep arriving while steps are in flight.
                    _ = durable.log.commitIfIdle(through: durable.store.sequence)
                }
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while durable.log.acknowledgedSequence < durable.store.sequence {
                try #require(ContinuousClock.now < deadline)
                Thread.sleep(forTimeInterval: 0.001)
            }
            #expect(durable.store.sequence == UInt64(writers * grantsEach))
            #expect((durable.log.preallocationStatistics?.steps ?? 0) >= 3)
            let crashed = directory + "/crashed"
            try copyDataFiles(from: directory, to: crashed)
            durable.close()

            for copy in [crashed, directory] {
                let recovered = try DurableStore(directory: copy, policy: .always)
                #expect(recovered.store.sequence == UInt64(writers * grantsEach), "\(copy)")
                #expect(recovered.recovery.droppedTornTail == nil)
                recovered.close()
            }
        }
    }
}

// MARK: Support

extension SegmentPreallocator.Tuning: CustomTestStringConvertible {
    /// Steps of a few hundred bytes, a record or two: the log outruns them all the time.
    /// Each step waits a little before it writes, so the log often reaches the step meanwhile.
    static let tiny = Self(
        initialZeros: 0, minimumAhead: 1_024, maximumAhead: 2_048, maximumStep: 512,
        beforeEachStep: { Thread.sleep(forTimeInterval: 0.000_2) }
    )

    public var testDescription: String { "ahead \(minimumAhead)...\(maximumAhead), steps of \(maximumStep)" }
}

extension LogPreallocationTests {
    func fileBytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Copies the log segments and snapshots of `source` (not its lock) to a new directory `destination`.
    func copyDataFiles(from source: String, to destination: String) throws {
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: source)
        where name.hasSuffix(".wal") || name.hasSuffix(".snap") {
            try FileManager.default.copyItem(atPath: source + "/" + name, toPath: destination + "/" + name)
        }
    }

    func overwrite(_ path: String, at offset: Int, with bytes: [UInt8]) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: Data(bytes))
    }
}
