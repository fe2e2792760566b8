#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A consistent copy of a data directory, made while `entitled` runs on it (`entitled-datadir backup`).
///
/// What makes it consistent: the newest snapshot (written once, under its final name) and the log
/// segments after it, each copied through its last whole record and no further, in sequence order, with
/// no change missing between one segment and the next. A segment read while the server appends to it
/// ends in a torn or unwritten record, which is left out: the copy holds every change acknowledged before
/// the backup began, and perhaps some after. When the server writes a snapshot meanwhile and removes the
/// segments it covers, the copy starts again from the new snapshot. The copy is then checked as a start
/// would read it (`DataDirectoryInspector.verify`).
public enum DataDirectoryBackup {
    /// What a backup copied.
    public struct Report: Sendable, Hashable {
        /// The snapshot copied, if the directory had one.
        public var snapshot: String?
        /// The log segments copied, in order.
        public var segments: [String] = []
        /// The last change the copy holds.
        public var sequence: UInt64 = 0
        /// The memberships a server started on the copy holds.
        public var membershipCount = 0
        /// How many times the copy started again because the server replaced the files it was reading.
        public var restarts = 0
    }

    /// How many times a copy starts again before it gives up (a snapshot every few milliseconds).
    static let attempts = 10

    /// Copies `source` into `destination`, which must not exist yet (it is created, readable by its owner
    /// only). Throws when the source cannot be read, the destination cannot be written, or the copy does
    /// not verify; a destination left by a failure is incomplete and must not be used.
    public static func copy(from source: String, to destination: String) throws(StorageError) -> Report {
        guard access(destination, F_OK) != 0 else {
            throw .io(operation: "backup into", path: destination, errno: EEXIST)
        }
        try FileSystem.makeDirectory(destination)
        var restarts = 0
        while true {
            do {
                var report = try copyOnce(from: source, to: destination)
                report.restarts = restarts
                return report
            } catch .io(_, let path, ENOENT) where restarts + 1 < attempts && path.hasPrefix(source) {
                // A snapshot replaced what was being copied: start again from it.
                restarts += 1
                for name in (try? FileSystem.listDirectory(destination)) ?? [] { try FileSystem.remove(destination + "/" + name) }
            }
        }
    }

    private static func copyOnce(from source: String, to destination: String) throws(StorageError) -> Report {
        let inventory = try Inventory(directory: source)
        var report = Report()
        let covered = inventory.snapshots.last?.sequence ?? 0
        if let snapshot = inventory.snapshots.last {
            try copyFile(source + "/" + snapshot.file, to: destination + "/" + snapshot.file)
            report.snapshot = snapshot.file
        }
        // The segments that may hold changes after the snapshot: not those a later segment starts within it.
        let segments = inventory.segments.enumerated().filter { index, _ in
            index + 1 >= inventory.segments.count || inventory.segments[index + 1].firstSequence > covered + 1
        }.map(\.element)
        for (index, segment) in segments.enumerated() {
            let isLast = index + 1 == segments.count
            // A segment followed by another is closed: read again until what it holds reaches the next one's
            // first change (the server may have appended to it between the listing and the read).
            var copied = try copySegment(segment.file, from: source, to: destination)
            if !isLast {
                let next = segments[index + 1].firstSequence
                if copied + 1 < next { copied = try copySegment(segment.file, from: source, to: destination) }
                guard copied + 1 >= next else {
                    throw .brokenHistory("\(segment.file) ends at change \(copied), but the next segment starts at \(next)")
                }
            }
            report.segments.append(segment.file)
        }
        try FileSystem.syncDirectory(destination)
        let verification = DataDirectoryInspector.verify(directory: destination)
        guard verification.verdict != .damaged, let sequence = verification.recoveredSequence else {
            throw .brokenHistory("the copy in \(destination) does not verify: run entitled-datadir verify on it")
        }
        report.sequence = sequence
        report.membershipCount = verification.recoveredMembershipCount ?? 0
        return report
    }

    /// Copies a log segment through its last whole record; returns the last change it holds (the change
    /// before its first when it holds none). Damage other than a torn tail (a record being written) is the
    /// source's own, and stops the backup: a copy must not quietly end where the original is broken.
    ///
    /// The source is scanned first, a window at a time, and only its records are copied: the zeros a
    /// server prepares ahead of its records (or a sparse file's gigabytes of them) never reach the copy.
    private static func copySegment(_ file: String, from source: String, to destination: String) throws(StorageError) -> UInt64 {
        let target = destination + "/" + file
        let scan = try LogSegmentScan.upToDamage(path: source + "/" + file, file: file)
        if let damage = scan.damage { throw damage.error }
        let end = scan.tornTailOffset ?? scan.unusedTailOffset ?? scan.fileLength
        try FileSystem.remove(target)
        let copied = try copyFile(source + "/" + file, to: target, length: end)
        guard copied < end else { return scan.firstSequence + UInt64(scan.records.count) - 1 }
        // The source was cut meanwhile (a server undoing a failed write): what the copy holds is what counts.
        let check = try LogSegmentScan.upToDamage(path: target, file: file)
        if let damage = check.damage { throw damage.error }
        let checkEnd = check.tornTailOffset ?? check.unusedTailOffset ?? check.fileLength
        if checkEnd < check.fileLength { try FileSystem.truncate(target, to: checkEnd) }
        return check.firstSequence + UInt64(check.records.count) - 1
    }

    /// The size of the pieces a file is copied in.
    static let copyPieceLength = 1 << 20

    /// Copies the first `length` bytes of `source` (all of it by default; fewer when it is shorter now)
    /// into a new file `target`, a piece at a time, and syncs it; returns how many bytes it copied.
    @discardableResult
    private static func copyFile(_ source: String, to target: String, length: Int = .max) throws(StorageError) -> Int {
        let input = try FileSystem.openRegularFile(source)
        defer { close(input) }
        let output = try FileSystem.createFile(target)
        defer { close(output) }
        let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: copyPieceLength, alignment: 16)
        defer { piece.deallocate() }
        var copied = 0
        while copied < length {
            let wanted = UnsafeMutableRawBufferPointer(rebasing: piece[0..<min(piece.count, length - copied)])
            let count = try FileSystem.read(input, into: wanted, at: copied, path: source)
            if count == 0 { break }
            try FileSystem.writeAll(output, UnsafeRawBufferPointer(rebasing: piece[0..<count]), path: target)
            copied += count
        }
        try FileSystem.syncData(output, path: target)
        return copied
    }
}
