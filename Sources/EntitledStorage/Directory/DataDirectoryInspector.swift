import EntitledCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks a data directory by the rules a starting server applies, and cuts a damaged log segment back
/// to its last good record when an operator asks for it: the engine of the `entitled-datadir` tool.
public enum DataDirectoryInspector {
    /// Reads every file of the data directory at `directory` and checks it the way `DurableStore` recovers
    /// it (Protocol/STORAGE.md, "Recovery"): the snapshots, every log segment, and that the records after
    /// the newest snapshot continue it without a gap.
    ///
    /// Takes no lock and changes nothing (it does not even create the directory), so it can run beside a
    /// server; the files may then change while they are read, and the server's last segment can show a
    /// record being written as a torn tail.
    public static func verify(directory: String) -> VerificationReport {
        var report = VerificationReport(directory: directory)
        guard isDirectory(directory) else {
            report.problems.append("\(directory) is not a directory (a server would create an empty one)")
            report.verdict = .damaged
            return report
        }
        let inventory: Inventory
        do throws(StorageError) {
            inventory = try Inventory(directory: directory)
        } catch {
            report.problems.append(error.message)
            report.verdict = .damaged
            return report
        }

        // Snapshots: the server reads only the newest. Older ones are checked too, because an operator
        // deciding what to do wants to know whether there is an intact one to fall back on.
        var image = StoreImage(sequence: 0, memberships: MembershipTable(), catalog: [:])
        var snapshotUsable = true
        let newest = inventory.snapshots.last
        for snapshot in inventory.snapshots {
            let isNewest = snapshot.file == newest?.file
            var entry = DataFileReport(
                kind: .snapshot, name: snapshot.file, size: size(of: snapshot.file, in: directory),
                affectsRecovery: isNewest
            )
            entry.lastSequence = snapshot.sequence
            do throws(StorageError) {
                let read = try SnapshotFile.read(snapshot.file, in: directory)
                guard read.sequence == snapshot.sequence else {
                    throw .corruptSnapshot(
                        file: snapshot.file, offset: 16,
                        problem: "the header says change \(read.sequence), the name says \(snapshot.sequence)"
                    )
                }
                entry.membershipCount = read.memberships.count
                if isNewest { image = read }
            } catch {
                entry.status = status(of: error)
                if isNewest { snapshotUsable = false }
            }
            entry.note = isNewest
                ? "the newest snapshot: a server starts from it"
                : "older than \(newest?.file ?? "the newest snapshot"): a server does not read it and removes it at start"
            report.files.append(entry)
        }
        if !snapshotUsable {
            report.problems.append("the newest snapshot is damaged, so the log after it could not be checked for continuity")
        }

        // Segments: every one is scanned, as the server does, and the records after the snapshot are
        // replayed into a scratch store, so that "ok" means a server would start with exactly this state.
        var replaying: EntitlementStore? = snapshotUsable ? EntitlementStore(restoring: image) : nil
        for (index, segment) in inventory.segments.enumerated() {
            let isLast = index == inventory.segments.count - 1
            let path = directory + "/" + segment.file
            var entry = DataFileReport(
                kind: .logSegment, name: segment.file, size: size(of: segment.file, in: directory), affectsRecovery: true
            )
            do throws(StorageError) {
                let scan = try LogSegmentScan(path: path, file: segment.file)
                entry.recordCount = scan.records.count
                entry.firstSequence = scan.records.first?.sequence
                entry.lastSequence = scan.records.last?.sequence
                if let store = replaying {
                    if let damage = replay(scan.records, after: image.sequence, into: store, path: path, firstSequence: segment.firstSequence) {
                        entry.status = damage
                    }
                }
                if entry.status == .ok, let torn = scan.tornTailOffset {
                    if isLast {
                        entry.status = .tornTail(offset: torn, bytes: scan.tornBytes)
                        entry.note = torn == 0
                            ? "the file ends inside its header (a crash during a log rotation): a server removes it at start"
                            : "a crash cut the last record short, so it was never acknowledged: a server drops it at start"
                    } else {
                        entry.status = .corrupt(
                            offset: torn, problem: "the file ends in the middle of a record, but a newer log file follows it"
                        )
                    }
                } else if entry.status == .ok, let unused = scan.unusedTailOffset {
                    entry.note = "\(scan.unusedBytes) bytes of zero-filled space after the last record (at offset \(unused)), prepared for records to come: not a record"
                        + (isLast ? "; a server trims it at start" : "")
                }
            } catch {
                entry.status = status(of: error)
                // Best effort: how much of the file is still good, for deciding whether to cut it.
                if let walk = try? SegmentWalk(path: path, firstSequence: segment.firstSequence) {
                    entry.recordCount = walk.recordOffsets.count
                    entry.firstSequence = walk.recordOffsets.isEmpty ? nil : segment.firstSequence
                    entry.lastSequence = walk.lastGoodSequence
                }
            }
            if entry.status.isDamage { replaying = nil }
            if let newest, snapshotUsable, entry.status == .ok, !isLast,
                inventory.segments[index + 1].firstSequence <= newest.sequence + 1
            {
                entry.note = "every record is in \(newest.file): a server removes it at start (after checking it)"
            }
            report.files.append(entry)
        }

        for file in inventory.temporaryFiles {
            var entry = DataFileReport(
                kind: .temporarySnapshot, name: file, size: size(of: file, in: directory), affectsRecovery: false
            )
            entry.status = .notRead
            entry.note = "a snapshot a crash interrupted: a server removes it at start"
            report.files.append(entry)
        }

        if !report.problems.isEmpty || report.files.contains(where: { $0.affectsRecovery && $0.status.isDamage }) {
            report.verdict = .damaged
        } else {
            report.verdict = report.files.contains(where: { $0.status.isTornTail }) ? .okWithTornTail : .ok
            report.recoveredSequence = replaying?.sequence
            report.recoveredMembershipCount = replaying?.membershipCount
        }
        return report
    }

    /// Cuts the log segment `file` of the data directory at `directory` right after its last record that
    /// passes every check, discarding everything after it: the operator's repair of a damaged log, to be
    /// used only after reading `verify`'s report. An intact segment is left unchanged.
    ///
    /// Takes the directory's lock, so it refuses while a server uses the directory. The truncation is
    /// synced before it returns.
    /// - Parameter file: the segment's name (`log-<20 digits>.wal`), or a path to it inside `directory`.
    /// - Throws: `StorageError.locked` while a server holds the directory; `.io` when `file` is not a log
    ///   segment of `directory`; `.corruptLog` when the damage is in the file header, which a cut cannot
    ///   repair (the file is left alone); `.io` for a file system failure.
    public static func cutLog(directory: String, file: String) throws(StorageError) -> CutReport {
        let name = try segmentName(file, in: directory)
        let path = directory + "/" + name
        let lock = try DirectoryLock(directory: directory)
        defer { lock.release() }
        guard let firstSequence = LogFormat.firstSequence(ofSegmentNamed: name), let originalSize = FileSystem.fileSize(path) else {
            throw notASegment(file, in: directory)
        }

        // LogSegmentScan is the authority on whether and where the file fails; the walk finds the record
        // boundary before that point, which the scan does not keep.
        let failureOffset: Int
        let problem: String
        switch Result(catching: { () throws(StorageError) in try LogSegmentScan(path: path, file: name) }) {
        case .success(let scan):
            guard let torn = scan.tornTailOffset else {
                return CutReport(
                    directory: directory, file: name, changed: false, originalSize: originalSize, cutOffset: originalSize,
                    droppedBytes: 0, droppedRecords: 0, keptRecords: scan.records.count,
                    lastGoodSequence: scan.records.last?.sequence, problem: nil,
                    verdictAfterCut: verify(directory: directory).verdict
                )
            }
            guard torn >= LogFormat.segmentHeaderLength else {
                throw .corruptLog(
                    file: name, offset: 0,
                    problem: "the file is shorter than its \(LogFormat.segmentHeaderLength)-byte header, so it holds no record to keep; cut-log left it alone (a server removes it when it is the newest segment)"
                )
            }
            failureOffset = torn
            problem = "a crash cut the last record short (\(scan.tornBytes) bytes from there to the end of the file)"
        case .failure(let error):
            guard case .corruptLog(_, let offset, let scanProblem) = error else { throw error }
            guard offset >= LogFormat.segmentHeaderLength else {
                throw .corruptLog(
                    file: name, offset: offset,
                    problem: "\(scanProblem); cut-log only cuts records after an intact file header, so it left the file alone"
                )
            }
            failureOffset = offset
            problem = scanProblem
        }

        let walk = try SegmentWalk(path: path, firstSequence: firstSequence)
        guard let failure = walk.failure, failure.offset <= failureOffset else {
            throw .corruptLog(
                file: name, offset: failureOffset,
                problem: "\(problem); cut-log could not find the record boundary before it, so it left the file alone"
            )
        }
        try FileSystem.truncate(path, to: failure.offset)

        // The cut file must now pass every check with exactly the records kept.
        let check = try LogSegmentScan(path: path, file: name)
        guard check.tornTailOffset == nil, check.records.count == walk.recordOffsets.count else {
            throw .corruptLog(
                file: name, offset: failure.offset,
                problem: "after cutting at this offset the file still fails its checks; run entitled-datadir verify"
            )
        }
        return CutReport(
            directory: directory, file: name, changed: true, originalSize: originalSize, cutOffset: failure.offset,
            droppedBytes: originalSize - failure.offset, droppedRecords: walk.recordsFromFailure,
            keptRecords: walk.recordOffsets.count, lastGoodSequence: walk.lastGoodSequence,
            problem: "at byte offset \(failureOffset): \(problem)",
            verdictAfterCut: verify(directory: directory).verdict
        )
    }

    // MARK: Helpers

    /// Replays the records after `snapshotSequence` as `DurableStore` does; returns why it would stop, if
    /// it would.
    private static func replay(
        _ records: [LoggedChange], after snapshotSequence: UInt64, into store: EntitlementStore,
        path: String, firstSequence: UInt64
    ) -> DataFileReport.Status? {
        // Record offsets are needed only to name a failure, so the file is walked again only then.
        func offset(of index: Int) -> Int {
            let walk = try? SegmentWalk(path: path, firstSequence: firstSequence)
            guard let offsets = walk?.recordOffsets, index < offsets.count else { return LogFormat.segmentHeaderLength }
            return offsets[index]
        }
        for (index, record) in records.enumerated() where record.sequence > snapshotSequence {
            guard record.sequence == store.sequence + 1 else {
                return .brokenHistory(
                    offset: offset(of: index),
                    problem: "holds change \(record.sequence), but the changes before it end at \(store.sequence); a log file is missing"
                )
            }
            do throws(StoreError) {
                try store.replay(record.change, context: record.context, sequence: record.sequence)
            } catch {
                return .corrupt(offset: offset(of: index), problem: error.message)
            }
        }
        return nil
    }

    private static func status(of error: StorageError) -> DataFileReport.Status {
        switch error {
        case .corruptLog(_, let offset, let problem), .corruptSnapshot(_, let offset, let problem):
            return .corrupt(offset: offset, problem: problem)
        case .brokenHistory(let problem):
            return .brokenHistory(offset: 0, problem: problem)
        case .io, .locked, .notALogSegment, .writesUnavailable:
            return .unreadable(error.message)
        }
    }

    private static func size(of file: String, in directory: String) -> Int {
        FileSystem.fileSize(directory + "/" + file) ?? 0
    }

    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// The segment name `file` refers to, when it is a segment name or a path to a segment in `directory`.
    private static func segmentName(_ file: String, in directory: String) throws(StorageError) -> String {
        var name = file
        if let slash = file.lastIndex(of: "/") {
            name = String(file[file.index(after: slash)...])
            let parent = slash == file.startIndex ? "/" : String(file[..<slash])
            guard let parentPath = canonicalPath(parent), let directoryPath = canonicalPath(directory), parentPath == directoryPath else {
                throw notASegment(file, in: directory)
            }
        }
        guard LogFormat.firstSequence(ofSegmentNamed: name) != nil, FileSystem.fileSize(directory + "/" + name) != nil else {
            throw notASegment(file, in: directory)
        }
        return name
    }

    private static func canonicalPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func notASegment(_ file: String, in directory: String) -> StorageError {
        .notALogSegment(file: file, directory: directory)
    }
}

// MARK: Reports

/// What `DataDirectoryInspector.verify(directory:)` found.
public struct VerificationReport: Sendable, Hashable, CustomStringConvertible {
    /// Whether a server would start on the directory.
    public enum Verdict: String, Sendable, Hashable {
        /// Every file a server reads passes its checks.
        case ok
        /// As `ok`, except that the newest log segment ends in a torn record, which a server drops (with a
        /// warning) at start: a crash cut it short, so it was never acknowledged.
        case okWithTornTail = "ok-with-torn-tail"
        /// A server would refuse to start.
        case damaged
    }

    /// The directory as given.
    public var directory: String
    /// Snapshots (oldest first), then log segments (in sequence order), then left-over temporary files.
    public var files: [DataFileReport] = []
    /// Problems that belong to no single file.
    public var problems: [String] = []
    public var verdict = Verdict.ok
    /// The last change a server starting now would recover; `nil` when damaged.
    public var recoveredSequence: UInt64?
    /// How many memberships it would hold; `nil` when damaged.
    public var recoveredMembershipCount: Int?

    init(directory: String) {
        self.directory = directory
    }

    /// One line per file (with a note where a server treats it specially), then the verdict and what to do.
    public var description: String {
        var lines = ["data directory \(directory)"]
        if files.isEmpty, problems.isEmpty { lines.append("  (no snapshot and no log: a server starts empty)") }
        let width = files.map(\.name.count).max() ?? 0
        for file in files {
            lines.append("  " + file.summary(nameWidth: width))
            if let note = file.note { lines.append("      " + note) }
        }
        for problem in problems { lines.append("  problem: " + problem) }
        switch verdict {
        case .ok:
            lines.append("verdict: ok: a server starts with every change through \(recoveredSequence ?? 0) (\(recoveredMembershipCount ?? 0) memberships)")
        case .okWithTornTail:
            lines.append(
                "verdict: ok-with-torn-tail: a server drops the torn record (it was never acknowledged) and starts with every change through \(recoveredSequence ?? 0) (\(recoveredMembershipCount ?? 0) memberships)"
            )
        case .damaged:
            let damaged = files.filter { $0.affectsRecovery && $0.status.isDamage }
            if damaged.isEmpty {
                lines.append("verdict: damaged: this is not a data directory a server could start from")
                break
            }
            lines.append("verdict: damaged: a server refuses to start on this directory. Keep a copy of it before changing anything.")
            for file in damaged where file.kind == .logSegment {
                switch file.status {
                case .brokenHistory:
                    lines.append("  \(file.name): a log file before it is missing; restore it from a backup (cut-log cannot fill a gap)")
                    continue
                case .corrupt(let offset, _) where offset < LogFormat.segmentHeaderLength:
                    lines.append("  \(file.name): its file header is damaged, which cut-log does not repair; restore the file from a backup")
                    continue
                case .unreadable:
                    lines.append("  \(file.name): it cannot be read; fix the file system error above first")
                    continue
                default:
                    break
                }
                lines.append(
                    "  \(file.name): `entitled-datadir cut-log \(directory) \(file.name)` cuts it back to its last good record, discarding every record after it"
                )
            }
            if damaged.contains(where: { $0.kind == .snapshot }) {
                lines.append("  the newest snapshot is damaged: this tool cannot repair a snapshot; restore the directory from a backup")
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// One file of a data directory, as `verify` found it.
public struct DataFileReport: Sendable, Hashable {
    /// What the file is, by its name.
    public enum Kind: String, Sendable, Hashable {
        /// `snapshot-<sequence>.snap`
        case snapshot
        /// `log-<first sequence>.wal`
        case logSegment = "log segment"
        /// `snapshot-<sequence>.snap.tmp`, left by a crash while a snapshot was written.
        case temporarySnapshot = "temporary snapshot"
    }

    /// What the checks found.
    public enum Status: Sendable, Hashable, CustomStringConvertible {
        /// The file passes every check.
        case ok
        /// The file ends in an incomplete record starting at `offset`; `bytes` from there to the end.
        case tornTail(offset: Int, bytes: Int)
        /// The file fails a check at byte `offset`.
        case corrupt(offset: Int, problem: String)
        /// The file is intact, but its record at `offset` does not follow the change before it: a file
        /// between them is missing.
        case brokenHistory(offset: Int, problem: String)
        /// The file could not be read.
        case unreadable(String)
        /// The file is not read by a server, so it was not checked.
        case notRead

        /// Whether a server that reads the file refuses to start.
        public var isDamage: Bool {
            switch self {
            case .corrupt, .brokenHistory, .unreadable: return true
            case .ok, .tornTail, .notRead: return false
            }
        }

        /// Whether the file ends in a torn record.
        public var isTornTail: Bool {
            if case .tornTail = self { return true }
            return false
        }

        /// For example `corrupt at offset 396: a record fails its checksum`.
        public var description: String {
            switch self {
            case .ok: return "ok"
            case .tornTail(let offset, let bytes): return "torn tail at offset \(offset) with \(bytes) bytes"
            case .corrupt(let offset, let problem): return "corrupt at offset \(offset): \(problem)"
            case .brokenHistory(let offset, let problem): return "history broken at offset \(offset): \(problem)"
            case .unreadable(let reason): return "unreadable: \(reason)"
            case .notRead: return "not read"
            }
        }
    }

    public var kind: Kind
    /// The file name, without the directory.
    public var name: String
    /// The size in bytes.
    public var size: Int
    /// The first record's sequence (log segments with records).
    public var firstSequence: UInt64?
    /// The last record's sequence, or the last change a snapshot holds. For a damaged segment, the last
    /// record before the damage.
    public var lastSequence: UInt64?
    /// Records in a log segment (before the damage, for a damaged one).
    public var recordCount: Int?
    /// Memberships in an intact snapshot.
    public var membershipCount: Int?
    /// What the checks found.
    public var status = Status.ok
    /// Whether a starting server reads this file, so that damage in it stops the start.
    public var affectsRecovery: Bool
    /// What a server does with the file, where that is worth saying.
    public var note: String?

    init(kind: Kind, name: String, size: Int, affectsRecovery: Bool) {
        self.kind = kind
        self.name = name
        self.size = size
        self.affectsRecovery = affectsRecovery
    }

    func summary(nameWidth: Int) -> String {
        var contents: String
        switch kind {
        case .snapshot:
            contents = "through change \(lastSequence ?? 0)"
            if let membershipCount { contents += ", \(membershipCount) memberships" }
        case .logSegment:
            let count = recordCount ?? 0
            let noun = count == 1 ? "record" : "records"
            let range = firstSequence.map { first in "changes \(first)-\(lastSequence ?? first), " } ?? ""
            contents = range + "\(count) \(noun)" + (status.isDamage ? " before the damage" : "")
        case .temporarySnapshot:
            contents = "-"
        }
        let padded = name + String(repeating: " ", count: max(0, nameWidth - name.count))
        return "\(padded)  \(kind.rawValue), \(size) bytes, \(contents): \(status)"
    }
}

/// What `DataDirectoryInspector.cutLog(directory:file:)` did.
public struct CutReport: Sendable, Hashable, CustomStringConvertible {
    /// The directory as given.
    public var directory: String
    /// The segment's name.
    public var file: String
    /// Whether the file was cut; `false` when it was intact.
    public var changed: Bool
    /// The size before the cut.
    public var originalSize: Int
    /// Where the file ends now: right after its last good record.
    public var cutOffset: Int
    /// Bytes discarded: the original size minus `cutOffset`.
    public var droppedBytes: Int
    /// Records discarded, best effort: the damaged one, and every intact-looking one after it. Where a
    /// record header is damaged its length is unknown, so the damaged stretch counts as one record.
    public var droppedRecords: Int
    /// Records the segment still holds.
    public var keptRecords: Int
    /// The last change the segment still holds; `nil` when it holds none.
    public var lastGoodSequence: UInt64?
    /// What was wrong where the cut was made; `nil` when nothing was cut.
    public var problem: String?
    /// What `verify` says about the whole directory afterwards.
    public var verdictAfterCut: VerificationReport.Verdict

    /// What was cut (or that nothing was), and whether the directory now verifies.
    public var description: String {
        let kept = lastGoodSequence.map { "the last change it holds is \($0)" } ?? "it holds no record now"
        var lines: [String] = []
        if changed {
            lines.append("cut \(file) at byte offset \(cutOffset), right after its last good record")
            if let problem { lines.append("  damage found \(problem)") }
            lines.append(
                "  dropped \(droppedBytes) bytes holding about \(droppedRecords) record\(droppedRecords == 1 ? "" : "s") (best-effort count); kept \(keptRecords) record\(keptRecords == 1 ? "" : "s"); \(kept)"
            )
        } else {
            lines.append("\(file) is intact (\(keptRecords) record\(keptRecords == 1 ? "" : "s"); \(kept)): nothing was cut")
        }
        switch verdictAfterCut {
        case .ok, .okWithTornTail:
            lines.append("the data directory now verifies as \(verdictAfterCut.rawValue): a server can start")
        case .damaged:
            lines.append(
                "the data directory still verifies as damaged (for example, a newer segment no longer follows this one): run `entitled-datadir verify \(directory)`"
            )
        }
        return lines.joined(separator: "\n")
    }
}

// MARK: Record boundaries

/// A segment's records walked front to back with the checks `LogSegmentScan` makes, keeping where each
/// record starts: the scan names the first problem, but a cut needs the boundary before it.
struct SegmentWalk {
    /// Where each record that passes every check starts.
    var recordOffsets: [Int] = []
    var lastGoodSequence: UInt64?
    /// The first record that fails a check or is incomplete: where it starts, and why.
    var failure: (offset: Int, problem: String)?
    /// Records from `failure` to the end, best effort (see `CutReport.droppedRecords`).
    var recordsFromFailure = 0

    init(path: String, firstSequence: UInt64) throws(StorageError) {
        let bytes = try FileSystem.readWholeFile(path)
        bytes.withUnsafeBytes { raw in walk(raw, firstSequence: firstSequence) }
    }

    private enum Frame {
        /// Header and payload pass their checksums.
        case intact(length: Int)
        /// The header passes, so the length is trustworthy; the payload does not.
        case damagedPayload(length: Int)
        /// The header fails, or claims more than any record has.
        case damagedHeader
        /// The file ends before the header or the payload does.
        case incomplete
    }

    private static func frame(at offset: Int, in bytes: UnsafeRawBufferPointer) -> Frame {
        let remaining = bytes.count - offset
        guard remaining >= LogFormat.recordHeaderLength else { return .incomplete }
        let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        let payloadChecksum = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        let headerChecksum = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self))
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 8)])) == headerChecksum,
            length <= LogFormat.maximumPayloadLength
        else { return .damagedHeader }
        guard remaining - LogFormat.recordHeaderLength >= length else { return .incomplete }
        let start = offset + LogFormat.recordHeaderLength
        let payload = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)])
        return CRC32C.checksum(payload) == payloadChecksum ? .intact(length: length) : .damagedPayload(length: length)
    }

    private mutating func walk(_ bytes: UnsafeRawBufferPointer, firstSequence: UInt64) {
        guard bytes.count >= LogFormat.segmentHeaderLength else {
            failure = (0, "the file ends inside its header")
            return
        }
        // The header's version (checked by the scan that found the failure); records of another version
        // would not read.
        let version = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        var offset = LogFormat.segmentHeaderLength
        var expected = firstSequence
        while offset < bytes.count {
            // Zero-filled space prepared for records to come ends the records; it is not a failure.
            if UnsafeRawBufferPointer(rebasing: bytes[offset...]).allSatisfy({ $0 == 0 }) { break }
            let frame = Self.frame(at: offset, in: bytes)
            guard case .intact(let length) = frame else {
                failure = (offset, Self.describe(frame))
                break
            }
            let start = offset + LogFormat.recordHeaderLength
            var reader = BinaryReader(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]))
            guard let logged = try? reader.readLoggedChange(version: version) else {
                failure = (offset, "a record's payload is malformed")
                break
            }
            guard logged.sequence == expected else {
                failure = (offset, "record \(logged.sequence) where record \(expected) belongs")
                break
            }
            recordOffsets.append(offset)
            lastGoodSequence = logged.sequence
            expected += 1
            offset = start + length
        }
        if let failure { recordsFromFailure = Self.countRecords(from: failure.offset, in: bytes) }
    }

    private static func describe(_ frame: Frame) -> String {
        switch frame {
        case .intact: return "intact"
        case .damagedPayload: return "a record fails its checksum"
        case .damagedHeader: return "a record header fails its checks"
        case .incomplete: return "the file ends in the middle of a record"
        }
    }

    /// Counts records from `start` to the end: frames whose header is intact are skipped by their length;
    /// across damaged bytes, the next intact frame is searched byte by byte. A stretch of damaged bytes
    /// counts as one record, unless it is all zeros (space never written, not a record).
    private static func countRecords(from start: Int, in bytes: UnsafeRawBufferPointer) -> Int {
        var count = 0
        var offset = start
        var damagedStretchHasData = false
        var inDamagedStretch = false
        while offset < bytes.count {
            switch frame(at: offset, in: bytes) {
            case .intact(let length), .damagedPayload(let length):
                if inDamagedStretch, damagedStretchHasData { count += 1 }
                inDamagedStretch = false
                damagedStretchHasData = false
                count += 1
                offset += LogFormat.recordHeaderLength + length
            case .damagedHeader, .incomplete:
                inDamagedStretch = true
                if bytes[offset] != 0 { damagedStretchHasData = true }
                offset += 1
            }
        }
        if inDamagedStretch, damagedStretchHasData { count += 1 }
        return count
    }
}
