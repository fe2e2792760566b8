import EntitledStorage

// The text `verify` and `cut-log` print for a person (Protocol/STORAGE.md §11): EntitledStorage returns
// typed reports (`DataDirectoryInspector`), and their wording is the tool's.

extension VerificationReport {
    /// One line per file (with a note where a server treats it specially), then the verdict and what to do.
    var text: String {
        var lines = ["data directory \(directory)"]
        if files.isEmpty, problems.isEmpty { lines.append("  (no snapshot and no log: a server starts empty)") }
        let width = files.map(\.name.count).max() ?? 0
        for file in files {
            lines.append("  " + file.summary(nameWidth: width))
            if let note = file.note { lines.append("      " + note.text) }
        }
        for problem in problems { lines.append("  problem: " + sentence(for: problem)) }
        switch verdict {
        case .ok:
            lines.append("verdict: ok: a server starts with every change through \(recoveredSequence ?? 0) (\(recoveredMembershipCount ?? 0) memberships)")
        case .okWithTornTail:
            lines.append(
                "verdict: ok-with-torn-tail: a server drops the torn record (it was never acknowledged) and starts with every change through \(recoveredSequence ?? 0) (\(recoveredMembershipCount ?? 0) memberships)"
            )
        case .damaged:
            lines += whatToDo
        }
        return lines.joined(separator: "\n")
    }

    /// The verdict of a damaged directory, and what an operator can do about each damaged file.
    private var whatToDo: [String] {
        let damaged = files.filter { $0.affectsRecovery && $0.status.isDamage }
        if damaged.isEmpty {
            return ["verdict: damaged: this is not a data directory a server could start from"]
        }
        var lines = ["verdict: damaged: a server refuses to start on this directory. Keep a copy of it before changing anything."]
        for file in damaged where file.kind == .logSegment {
            switch file.status {
            case .brokenHistory:
                lines.append("  \(file.name): a log file before it is missing; restore it from a backup (cut-log cannot fill a gap)")
            case .corrupt where file.hasDamagedSegmentHeader:
                lines.append("  \(file.name): its file header is damaged, which cut-log does not repair; restore the file from a backup")
            case .unreadable:
                lines.append("  \(file.name): it cannot be read; fix the file system error above first")
            default:
                lines.append(
                    "  \(file.name): `entitled-datadir cut-log \(directory) \(file.name)` cuts it back to its last good record, discarding every record after it"
                )
            }
        }
        if damaged.contains(where: { $0.kind == .snapshot }) {
            lines.append("  the newest snapshot is damaged: this tool cannot repair a snapshot; restore the directory from a backup")
        }
        return lines
    }

    private func sentence(for problem: Problem) -> String {
        switch problem {
        case .notADirectory: return "\(directory) is not a directory (a server would create an empty one)"
        case .unlistable(let error): return error.message
        case .newestSnapshotDamaged: return "the newest snapshot is damaged, so the log after it could not be checked for continuity"
        }
    }
}

extension DataFileReport {
    /// The file's line: `log-…wal  log segment, 1992 bytes, changes 1-7, 7 records: ok`, the name padded
    /// to `nameWidth` so that the lines of a directory align.
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
        return "\(padded)  \(kind.text), \(size) bytes, \(contents): \(status.text)"
    }
}

extension DataFileReport.Kind {
    var text: String {
        switch self {
        case .snapshot: return "snapshot"
        case .logSegment: return "log segment"
        case .temporarySnapshot: return "temporary snapshot"
        }
    }
}

extension DataFileReport.Status {
    /// For example `corrupt at offset 396: a record fails its checksum`.
    var text: String {
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

extension DataFileReport.Note {
    var text: String {
        switch self {
        case .newestSnapshot:
            return "the newest snapshot: a server starts from it"
        case .olderSnapshot(let newest):
            return "older than \(newest): a server does not read it and removes it at start"
        case .tornInHeader:
            return "the file ends inside its header (a crash during a log rotation): a server removes it at start"
        case .tornLastRecord:
            return "a crash cut the last record short, so it was never acknowledged: a server drops it at start"
        case .unusedSpace(let offset, let bytes, let trimmedAtStart):
            return "\(bytes) bytes of zero-filled space after the last record (at offset \(offset)), prepared for records to come: not a record"
                + (trimmedAtStart ? "; a server trims it at start" : "")
        case .coveredBy(let snapshot):
            return "every record is in \(snapshot): a server removes it at start (after checking it)"
        case .interruptedSnapshot:
            return "a snapshot a crash interrupted: a server removes it at start"
        }
    }
}

extension CutReport {
    /// What was cut (or that nothing was), and whether the directory now verifies.
    var text: String {
        let kept = lastGoodSequence.map { "the last change it holds is \($0)" } ?? "it holds no record now"
        var lines: [String] = []
        if changed {
            lines.append("cut \(file) at byte offset \(cutOffset), right after its last good record")
            if let damage { lines.append("  damage found \(damage.text)") }
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

extension CutReport.Damage {
    /// For example `at byte offset 712: a record fails its checksum`.
    var text: String {
        switch self {
        case .tornTail(let offset, let bytes):
            return "at byte offset \(offset): a crash cut the last record short (\(bytes) bytes from there to the end of the file)"
        case .corrupt(let offset, let problem):
            return "at byte offset \(offset): \(problem)"
        }
    }
}
