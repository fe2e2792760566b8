import EntitledCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks a data directory by the rules a starting server applies, and cuts a damaged log segment back
/// to its last good record when an operator asks for it: the engine of the `entitled-datadir` tool. It
/// returns typed reports (`DataDirectoryReport.swift`); the words the tool prints are the tool's.
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
            report.problems.append(.notADirectory)
            report.verdict = .damaged
            return report
        }
        let inventory: Inventory
        do throws(StorageError) {
            inventory = try Inventory(directory: directory)
        } catch {
            report.problems.append(.unlistable(error))
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
            entry.note = isNewest ? .newestSnapshot : newest.map { .olderSnapshot(newest: $0.file) }
            report.files.append(entry)
        }
        if !snapshotUsable {
            report.problems.append(.newestSnapshotDamaged)
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
                // Read up to any damage: the records before it say how much of the file is still good, for
                // deciding whether to cut it.
                let scan = try LogSegmentScan.upToDamage(path: path, file: segment.file)
                entry.recordCount = scan.records.count
                entry.firstSequence = scan.records.first?.sequence
                entry.lastSequence = scan.records.last?.sequence
                if let damage = scan.damage {
                    entry.status = status(of: damage.error)
                } else if let store = replaying, let damage = replay(scan, after: image.sequence, into: store) {
                    entry.status = damage
                }
                if entry.status == .ok, let torn = scan.tornTailOffset {
                    if isLast {
                        entry.status = .tornTail(offset: torn, bytes: scan.tornBytes)
                        entry.note = torn == 0 ? .tornInHeader : .tornLastRecord
                    } else {
                        entry.status = .corrupt(
                            offset: torn, problem: "the file ends in the middle of a record, but a newer log file follows it"
                        )
                    }
                } else if entry.status == .ok, let unused = scan.unusedTailOffset {
                    entry.note = .unusedSpace(offset: unused, bytes: scan.unusedBytes, trimmedAtStart: isLast)
                }
            } catch {
                entry.status = status(of: error)
            }
            if entry.status.isDamage { replaying = nil }
            if let newest, snapshotUsable, entry.status == .ok, !isLast,
                inventory.segments[index + 1].firstSequence <= newest.sequence + 1
            {
                entry.note = .coveredBy(snapshot: newest.file)
            }
            report.files.append(entry)
        }

        for file in inventory.temporaryFiles {
            var entry = DataFileReport(
                kind: .temporarySnapshot, name: file, size: size(of: file, in: directory), affectsRecovery: false
            )
            entry.status = .notRead
            entry.note = .interruptedSnapshot
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
    /// - Throws: `StorageError.locked` while a server holds the directory; `.notALogSegment` when `file` is not
    ///   a log segment of `directory`; `.corruptLog` when the damage is in the file header, which a cut cannot
    ///   repair (the file is left alone); `.io` for a file system failure.
    public static func cutLog(directory: String, file: String) throws(StorageError) -> CutReport {
        let name = try segmentName(file, in: directory)
        let path = directory + "/" + name
        let lock = try DirectoryLock(directory: directory)
        defer { lock.release() }
        guard let originalSize = FileSystem.fileSize(path) else { throw notASegment(file, in: directory) }

        // The scan is the authority on whether and where the file fails, and on the record boundary
        // before that point: where the cut keeps every good record.
        let scan = try LogSegmentScan.upToDamage(path: path, file: name)
        let damage: CutReport.Damage
        let cutOffset: Int
        if let found = scan.damage {
            guard case .corruptLog(_, let offset, let problem) = found.error else { throw found.error }
            guard offset >= LogFormat.segmentHeaderLength, let recordOffset = found.recordOffset else {
                throw .corruptLog(
                    file: name, offset: offset,
                    problem: "\(problem); cut-log only cuts records after an intact file header, so it left the file alone"
                )
            }
            damage = .corrupt(offset: offset, problem: problem)
            cutOffset = recordOffset
        } else if let torn = scan.tornTailOffset {
            guard torn >= LogFormat.segmentHeaderLength else {
                throw .corruptLog(
                    file: name, offset: 0,
                    problem: "the file is shorter than its \(LogFormat.segmentHeaderLength)-byte header, so it holds no record to keep; cut-log left it alone (a server removes it when it is the newest segment)"
                )
            }
            damage = .tornTail(offset: torn, bytes: scan.tornBytes)
            cutOffset = torn
        } else {
            return CutReport(
                directory: directory, file: name, changed: false, originalSize: originalSize, cutOffset: originalSize,
                droppedBytes: 0, droppedRecords: 0, keptRecords: scan.records.count,
                lastGoodSequence: scan.records.last?.sequence, damage: nil,
                verdictAfterCut: verify(directory: directory).verdict
            )
        }

        var window = try SegmentWindow(path: path)
        let droppedRecords = try window.estimatedRecordCount(from: cutOffset)
        try FileSystem.truncate(path, to: cutOffset)

        // The cut file must now pass every check with exactly the records kept.
        let check = try LogSegmentScan(path: path, file: name)
        guard check.tornTailOffset == nil, check.records.count == scan.records.count else {
            throw .corruptLog(
                file: name, offset: cutOffset,
                problem: "after cutting at this offset the file still fails its checks; run entitled-datadir verify"
            )
        }
        return CutReport(
            directory: directory, file: name, changed: true, originalSize: originalSize, cutOffset: cutOffset,
            droppedBytes: originalSize - cutOffset, droppedRecords: droppedRecords,
            keptRecords: scan.records.count, lastGoodSequence: scan.records.last?.sequence, damage: damage,
            verdictAfterCut: verify(directory: directory).verdict
        )
    }

    // MARK: Helpers

    /// Replays the records of `scan` after `snapshotSequence` as `DurableStore` does; returns why it would
    /// stop, if it would, naming the record's start.
    private static func replay(
        _ scan: LogSegmentScan, after snapshotSequence: UInt64, into store: EntitlementStore
    ) -> DataFileReport.Status? {
        for (record, offset) in zip(scan.records, scan.recordOffsets) where record.sequence > snapshotSequence {
            guard record.sequence == store.sequence + 1 else {
                return .brokenHistory(
                    offset: offset,
                    problem: "holds change \(record.sequence), but the changes before it end at \(store.sequence); a log file is missing"
                )
            }
            do throws(StoreError) {
                try store.replay(record.change, context: record.context, sequence: record.sequence)
            } catch {
                return .corrupt(offset: offset, problem: error.message)
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
        case .io, .locked, .notALogSegment, .writesUnavailable, .notARegularFile, .loadingStopped:
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
