import EntitledTestSupport
import Foundation
import Testing

@testable import EntitledStorage

/// `entitled-datadir verify` and `backup`, the built tool as a real process, on data directories someone
/// with write access made hostile (issue #44, part 5): a FIFO named as a log segment used to hang both
/// for ever; a sparse segment of 6 GiB made both abort (exit 134) under a 3 GiB address-space limit,
/// since the segment was read whole. Every run here is bounded in time.
@Suite struct HostileDataDirectoryToolTests {
    typealias History = DataDirectoryInspectorTests.History
    static let segment = DataDirectoryInspectorTests.firstSegment
    /// 3 GiB, in KiB (`ulimit -v`).
    static let addressSpaceLimit = 3 << 20
    static let timeout = Duration.seconds(60)

    /// A directory holding five changes, and a FIFO named as the segment that would follow them.
    static func directoryWithFIFO(_ directory: String) throws -> String {
        _ = try History.write(changes: 5, in: directory)
        let fifo = directory + "/" + LogFormat.segmentName(firstSequence: 6)
        try #require(mkfifo(fifo, 0o600) == 0)
        return fifo
    }

    /// A directory holding five changes in a segment made sparse to 6 GiB; the length of its records.
    static func directoryWithSparseSegment(_ directory: String) throws -> Int {
        let history = try History.write(changes: 5, in: directory)
        try #require(truncate(directory + "/" + segment, 6 << 30) == 0)
        return try #require(history.segmentSizes.last)
    }

    static func tool(_ arguments: [String], addressSpaceKiB: Int? = nil) throws -> BoundedRun {
        let executable = ServerProcess.builtExecutable(named: "entitled-datadir")
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build the package first: \(executable.path)")
        return try BoundedRun.run("entitled-datadir", arguments, timeout: timeout, addressSpaceKiB: addressSpaceKiB)
    }

    @Test func verifyNamesAFIFOSegmentAndSaysTheDirectoryIsDamagedInsteadOfHanging() throws {
        try withScratchDirectory { directory in
            let fifo = try Self.directoryWithFIFO(directory)
            let run = try Self.tool(["verify", directory])
            #expect(!run.timedOut, "verify hung on the FIFO: \(run.output)")
            #expect(run.status == 1 && !run.endedBySignal, "\(run.output)")
            #expect(run.output.contains("\(fifo) is a FIFO, not a regular file"), "\(run.output)")
            #expect(run.output.contains("verdict: damaged"), "\(run.output)")
        }
    }

    @Test func backupNamesAFIFOSegmentAndFailsInsteadOfHanging() throws {
        try withScratchDirectory { directory in
            let fifo = try Self.directoryWithFIFO(directory)
            let run = try Self.tool(["backup", directory, directory + "-copy"])
            defer { try? FileManager.default.removeItem(atPath: directory + "-copy") }
            #expect(!run.timedOut, "backup hung on the FIFO: \(run.output)")
            #expect(run.status == 1 && !run.endedBySignal, "\(run.output)")
            #expect(run.output.contains("backup failed: \(fifo) is a FIFO, not a regular file"), "\(run.output)")
        }
    }

    @Test func verifyReadsASparseSixGiBSegmentUnderAThreeGiBAddressSpaceLimit() throws {
        try withScratchDirectory { directory in
            let records = try Self.directoryWithSparseSegment(directory)
            let run = try Self.tool(["verify", directory], addressSpaceKiB: Self.addressSpaceLimit)
            #expect(!run.timedOut, "\(run.output)")
            #expect(run.status == 0 && !run.endedBySignal, "status \(run.status): \(run.output)")
            #expect(run.output.contains("verdict: ok"), "\(run.output)")
            #expect(run.output.contains("\(records)"), "the unused space's offset: \(run.output)")
        }
    }

    @Test func backupCopiesOnlyTheRecordsOfASparseSixGiBSegmentUnderAThreeGiBAddressSpaceLimit() throws {
        try withScratchDirectory { directory in
            let records = try Self.directoryWithSparseSegment(directory)
            let copy = directory + "-copy"
            defer { try? FileManager.default.removeItem(atPath: copy) }
            let run = try Self.tool(["backup", directory, copy], addressSpaceKiB: Self.addressSpaceLimit)
            #expect(!run.timedOut, "\(run.output)")
            #expect(run.status == 0 && !run.endedBySignal, "status \(run.status): \(run.output)")
            #expect(run.output.contains("through change 5"), "\(run.output)")
            #expect(FileSystem.fileSize(copy + "/" + Self.segment) == records)
        }
    }
}
