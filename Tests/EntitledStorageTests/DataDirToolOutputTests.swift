import EntitledCore
import EntitledTestSupport
import Foundation
import Testing

@testable import EntitledStorage

/// What the built `entitled-datadir` prints for `verify` and `cut-log` (Protocol/STORAGE.md §11), word
/// for word, and its exit status: the tool words the typed reports `DataDirectoryInspector` returns.
@Suite struct DataDirToolOutputTests {
    typealias History = DataDirectoryInspectorTests.History
    static let segment = DataDirectoryInspectorTests.firstSegment

    @Test func verifyPrintsAnEmptyDirectoryAsOk() throws {
        try withScratchDirectory { directory in
            let run = try Self.tool(["verify", directory])
            #expect(run.status == 0)
            #expect(run.output == """
                data directory \(directory)
                  (no snapshot and no log: a server starts empty)
                verdict: ok: a server starts with every change through 0 (0 memberships)

                """)
        }
    }

    @Test func verifyPrintsAPathThatIsNoDirectoryAsDamaged() throws {
        try withScratchDirectory { directory in
            let missing = directory + "/missing"
            let run = try Self.tool(["verify", missing])
            #expect(run.status == 1)
            #expect(run.output == """
                data directory \(missing)
                  problem: \(missing) is not a directory (a server would create an empty one)
                verdict: damaged: this is not a data directory a server could start from

                """)
        }
    }

    @Test func verifyPrintsASnapshotTheSegmentAfterItAndAnInterruptedSnapshot() throws {
        try withScratchDirectory { directory in
            let durable = try DurableStore(directory: directory, policy: .always)
            try History.apply(changes: 3, to: durable)
            let snapshot = try durable.snapshot()
            try History.apply(changes: 2, to: durable, startingAt: 3)
            let memberships = durable.store.membershipCount
            let segmentSize = try #require(durable.log.currentSegmentLength)
            durable.close()
            let temporary = "snapshot-00000000000000000009.snap.tmp"
            try Data("partial".utf8).write(to: URL(fileURLWithPath: directory + "/" + temporary))
            let segment = "log-00000000000000000004.wal"

            let run = try Self.tool(["verify", directory])
            #expect(run.status == 0)
            #expect(run.output == """
                data directory \(directory)
                  \(snapshot.file)      snapshot, \(snapshot.bytes) bytes, through change 3, \(snapshotMemberships(directory, snapshot.file)) memberships: ok
                      the newest snapshot: a server starts from it
                  \(segment)            log segment, \(segmentSize) bytes, changes 4-5, 2 records: ok
                  \(temporary)  temporary snapshot, 7 bytes, -: not read
                      a snapshot a crash interrupted: a server removes it at start
                verdict: ok: a server starts with every change through 5 (\(memberships) memberships)

                """)
        }
    }

    @Test func verifyPrintsATornLastRecordAsOkWithTornTail() throws {
        try withScratchDirectory { directory in
            let history = try History.write(changes: 6, in: directory)
            let size = history.segmentSizes[6] - 5
            try DataDirectoryInspectorTests().truncateFile(directory + "/" + Self.segment, to: size)
            let torn = history.segmentSizes[5]

            let run = try Self.tool(["verify", directory])
            #expect(run.status == 0)
            #expect(run.output == """
                data directory \(directory)
                  \(Self.segment)  log segment, \(size) bytes, changes 1-5, 5 records: torn tail at offset \(torn) with \(size - torn) bytes
                      a crash cut the last record short, so it was never acknowledged: a server drops it at start
                verdict: ok-with-torn-tail: a server drops the torn record (it was never acknowledged) and starts with every change through 5 (\(membershipsAfter(5, directory)) memberships)

                """)

            let cut = try Self.tool(["cut-log", directory, Self.segment])
            #expect(cut.status == 0)
            #expect(cut.output == """
                cut \(Self.segment) at byte offset \(torn), right after its last good record
                  damage found at byte offset \(torn): a crash cut the last record short (\(size - torn) bytes from there to the end of the file)
                  dropped \(size - torn) bytes holding about 1 record (best-effort count); kept 5 records; the last change it holds is 5
                the data directory now verifies as ok: a server can start

                """)
        }
    }

    @Test func verifyNamesAFlippedByteAndCutLogCutsBeforeIt() throws {
        try withScratchDirectory { directory in
            let history = try History.write(changes: 10, in: directory)
            let record = history.segmentSizes[6]  // record 7
            let size = history.segmentSizes[10]
            try DataDirectoryInspectorTests().flipByte(at: record + 22, in: directory + "/" + Self.segment)

            let run = try Self.tool(["verify", directory])
            #expect(run.status == 1)
            #expect(run.output == """
                data directory \(directory)
                  \(Self.segment)  log segment, \(size) bytes, changes 1-6, 6 records before the damage: corrupt at offset \(record + 12): a record fails its checksum
                verdict: damaged: a server refuses to start on this directory. Keep a copy of it before changing anything.
                  \(Self.segment): `entitled-datadir cut-log \(directory) \(Self.segment)` cuts it back to its last good record, discarding every record after it

                """)

            let cut = try Self.tool(["cut-log", directory, Self.segment])
            #expect(cut.status == 0)
            #expect(cut.output == """
                cut \(Self.segment) at byte offset \(record), right after its last good record
                  damage found at byte offset \(record + 12): a record fails its checksum
                  dropped \(size - record) bytes holding about 4 records (best-effort count); kept 6 records; the last change it holds is 6
                the data directory now verifies as ok: a server can start

                """)

            let again = try Self.tool(["cut-log", directory, Self.segment])
            #expect(again.status == 0)
            #expect(again.output == """
                \(Self.segment) is intact (6 records; the last change it holds is 6): nothing was cut
                the data directory now verifies as ok: a server can start

                """)
        }
    }

    @Test func aDamagedFileHeaderIsLeftAloneByCutLog() throws {
        try withScratchDirectory { directory in
            let history = try History.write(changes: 3, in: directory)
            let size = history.segmentSizes[3]
            try DataDirectoryInspectorTests().flipByte(at: 0, in: directory + "/" + Self.segment)

            let run = try Self.tool(["verify", directory])
            #expect(run.status == 1)
            #expect(run.output == """
                data directory \(directory)
                  \(Self.segment)  log segment, \(size) bytes, changes 1-3, 3 records before the damage: corrupt at offset 0: not an entitled log file (bad magic)
                verdict: damaged: a server refuses to start on this directory. Keep a copy of it before changing anything.
                  \(Self.segment): its file header is damaged, which cut-log does not repair; restore the file from a backup

                """)

            let cut = try Self.tool(["cut-log", directory, Self.segment])
            #expect(cut.status == 1)
            #expect(cut.output == """
                entitled-datadir: the log file \(Self.segment) is corrupt at byte offset 0: not an entitled log file (bad magic); cut-log only cuts records after an intact file header, so it left the file alone. Nothing was dropped; see "When the data directory is damaged" in Protocol/OPERATIONS.md (entitled-datadir verify / cut-log)

                """)
        }
    }

    @Test func aMissingLogFileIsABrokenHistoryThatCutLogCannotRepair() throws {
        try withScratchDirectory { directory in
            let durable = try DurableStore(directory: directory, policy: .always)
            try History.apply(changes: 3, to: durable)
            let snapshot = try durable.snapshot()
            try History.apply(changes: 3, to: durable, startingAt: 3)
            let segmentSize = try #require(durable.log.currentSegmentLength)
            durable.close()
            try FileManager.default.removeItem(atPath: directory + "/" + snapshot.file)
            let segment = "log-00000000000000000004.wal"

            let run = try Self.tool(["verify", directory])
            #expect(run.status == 1)
            #expect(run.output == """
                data directory \(directory)
                  \(segment)  log segment, \(segmentSize) bytes, changes 4-6, 3 records before the damage: history broken at offset 28: holds change 4, but the changes before it end at 0; a log file is missing
                verdict: damaged: a server refuses to start on this directory. Keep a copy of it before changing anything.
                  \(segment): a log file before it is missing; restore it from a backup (cut-log cannot fill a gap)

                """)
        }
    }

    // MARK: Support

    /// Runs the built `entitled-datadir` (beside the test runner) with `arguments`: its exit status, and
    /// what it wrote to standard output and standard error.
    static func tool(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let executable = ServerProcess.builtExecutable(named: "entitled-datadir")
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build the package first: \(executable.path)")
        return try ServerProcess.runToCompletion("entitled-datadir", arguments)
    }

    /// The memberships the snapshot `file` of `directory` holds.
    func snapshotMemberships(_ directory: String, _ file: String) -> Int {
        (try? SnapshotFile.read(file, in: directory).memberships.count) ?? -1
    }

    /// The memberships a server recovers from `directory` (after change `sequence`), read without changing it.
    func membershipsAfter(_ sequence: UInt64, _ directory: String) -> Int {
        let report = DataDirectoryInspector.verify(directory: directory)
        return report.recoveredSequence == sequence ? (report.recoveredMembershipCount ?? -1) : -1
    }
}
