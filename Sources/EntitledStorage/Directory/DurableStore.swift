#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import EntitledCore
import Logging
import NIOConcurrencyHelpers

/// An `EntitlementStore` kept in a data directory: recovered from the newest snapshot and the log after
/// it when opened, every change logged before it is acknowledged, snapshots written on request.
///
/// The data directory holds `LOCK`, `snapshot-<sequence>.snap` (at most one after a completed snapshot)
/// and `log-<first sequence>.wal` segments; Protocol/STORAGE.md specifies the files.
public final class DurableStore: Sendable {
    public let directory: String
    public let store: EntitlementStore
    /// How many records ahead a replay prefetches the index entries of a creation: enough for a miss to
    /// memory to finish (a replayed creation takes about a microsecond).
    static let replayPrefetchDistance = 4
    public let log: LogWriter
    public let recovery: RecoveryReport
    private let lock: DirectoryLock
    private let logger: Logger
    /// One snapshot at a time; remembers the last one.
    private let snapshotState = NIOLock()
    nonisolated(unsafe) private var lastSnapshot: SnapshotReport?
    /// The last snapshot this process wrote, when, the log's byte count then, and how many it wrote: under
    /// its own lock, so that `persistenceStatus` never waits for a snapshot being written.
    private let newestWritten = NIOLockedValueBox<(report: SnapshotReport?, at: Timestamp?, logBytes: Int, count: Int)>((nil, nil, 0, 0))
    /// The size of the snapshot loaded at start, if any.
    private let loadedSnapshotBytes: Int?
    /// The bytes of the log segments found at start beyond the loaded snapshot: until this process writes
    /// a snapshot, they are part of the log a restart would replay.
    private let recoveredLogBytes: Int
    private let clock: @Sendable () -> Timestamp

    /// Opens (creating if needed) the data directory at `directory`, takes its lock and recovers the store.
    /// - Throws: `StorageError.locked` when another server uses the directory; `.corruptLog` or
    ///   `.corruptSnapshot` (naming the file and byte offset) when a file fails its checks; `.io` for
    ///   a file system failure. A torn last log record is not an error: it is dropped with a warning.
    /// - Parameter progress: told how many memberships the snapshot and the log hold and how many are
    ///   loaded, as they are, for whatever answers clients while the directory is read.
    public convenience init(
        directory: String,
        policy: FsyncPolicy = .always,
        clock: @escaping @Sendable () -> Timestamp = { Timestamp.now() },
        logger: Logger = Logger(label: "entitled.storage"),
        progress: LoadingProgress = LoadingProgress(),
        feedRetention: FeedRetention = .standard
    ) throws(StorageError) {
        try self.init(
            directory: directory, policy: policy, clock: clock, logger: logger, preallocation: .standard, progress: progress,
            feedRetention: feedRetention
        )
    }

    /// As the public initializer, with the log's preallocation tuned (tests make it tiny, to race it), and
    /// a hook run before each of the log's acknowledgement syncs (tests hold a sync open with it).
    init(
        directory: String,
        policy: FsyncPolicy,
        clock: @escaping @Sendable () -> Timestamp,
        logger: Logger,
        preallocation: SegmentPreallocator.Tuning,
        beforeSync: (@Sendable () -> Void)? = nil,
        progress: LoadingProgress = LoadingProgress(),
        feedRetention: FeedRetention = .standard
    ) throws(StorageError) {
        let started = ContinuousClock.now
        try FileSystem.makeDirectory(directory)
        let lock = try DirectoryLock(directory: directory)
        do throws(StorageError) {
            let log = LogWriter(directory: directory, policy: policy, logger: logger, beforeSync: beforeSync, preallocation: preallocation)
            let inventory = try Inventory(directory: directory)
            var report = RecoveryReport(
                snapshotFile: inventory.snapshots.last?.file, snapshotSequence: 0, replayedRecords: 0,
                droppedTornTail: nil, removedFiles: [], sequence: 0, membershipCount: 0, duration: .zero
            )
            var image = StoreImage(sequence: 0, memberships: MembershipTable(), catalog: [:])
            // A stop asked for while loading is taken between the steps of the load, each at most a few
            // seconds at tens of millions of memberships; only reading happens before the last of them.
            try Self.checkForStop(progress)
            if let newest = inventory.snapshots.last {
                image = try SnapshotFile.read(newest.file, in: directory, progress: progress)
                guard image.sequence == newest.sequence else {
                    throw .corruptSnapshot(file: newest.file, offset: 16, problem: "the header says change \(image.sequence), the name says \(newest.sequence)")
                }
                try Self.checkForStop(progress)
            }
            report.snapshotSequence = image.sequence
            let store = EntitlementStore(restoring: image, clock: clock, journal: log, feedRetention: feedRetention)
            try Self.checkForStop(progress)
            try Self.replay(
                inventory.segments, into: store, after: image.sequence, directory: directory, report: &report, logger: logger, progress: progress
            )

            // Left-overs: temporary snapshots from a crash, and files the snapshot already covers.
            for file in inventory.temporaryFiles { try FileSystem.remove(directory + "/" + file) }
            report.removedFiles += inventory.temporaryFiles
            report.removedFiles += try Self.removeCovered(by: image.sequence, in: directory)

            let nextSequence = store.sequence + 1
            // A segment named for the next record can exist only without records (a crash right after a
            // rotation); it is replaced.
            let reused = directory + "/" + LogFormat.segmentName(firstSequence: nextSequence)
            if FileSystem.fileSize(reused) != nil {
                try FileSystem.remove(reused)
                try FileSystem.syncDirectory(directory)
            }
            // What remains of the log once the covered files are gone and tails are cut: what a restart
            // after a crash would replay, counted before this process adds to it.
            let recoveredLogBytes = try Inventory(directory: directory).segments.reduce(0) {
                $0 + (FileSystem.fileSize(directory + "/" + $1.file) ?? 0)
            }
            try log.start(nextSequence: nextSequence)

            report.sequence = store.sequence
            report.membershipCount = store.membershipCount
            report.duration = ContinuousClock.now - started
            self.directory = directory
            self.store = store
            self.log = log
            self.recovery = report
            self.loadedSnapshotBytes = report.snapshotFile.flatMap { FileSystem.fileSize(directory + "/" + $0) }
            self.lock = lock
            self.logger = logger
            self.recoveredLogBytes = recoveredLogBytes
            self.clock = clock
        } catch {
            lock.release()
            throw error
        }
        // A strong reference, dropped by `close()`: a weak one would give this object a side table, and
        // every retain of it (the request processor holds it, and is copied for every request) would take
        // the slow path: callgrind counted about 125 more instructions per check.
        log.setRollbackHandler { acknowledged in self.rollBack(to: acknowledged) }
    }

    /// Replays every record after `sequence`, in order, checking that they form one unbroken history.
    /// With `repair`, a torn tail and unused zeros are cut off the files; without (a rollback, which runs
    /// while the log is live), files are only read, and records after `limit` are left out.
    private static func replay(
        _ segments: [Inventory.Segment],
        into store: EntitlementStore,
        after sequence: UInt64,
        through limit: UInt64 = .max,
        directory: String,
        report: inout RecoveryReport,
        logger: Logger,
        repair: Bool = true,
        progress: LoadingProgress = LoadingProgress()
    ) throws(StorageError) {
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            // A segment followed by one that starts within the snapshot is wholly covered by it (a crash
            // came between the snapshot and the removal of its log): nothing to replay, removed below.
            if !isLast, segments[index + 1].firstSequence <= sequence + 1 { continue }
            try checkForStop(progress)
            // Replayed batch by batch as the segment is decoded: a log of millions of grants is never
            // held decoded all at once. Room for its creations is made first, not by doubling as they come.
            let scan = try LogSegmentScan.replaying(
                path: directory + "/" + segment.file, file: segment.file,
                reserve: { creations in
                    store.reserveCapacity(forAdditionalMemberships: creations)
                    progress.expect(creations)
                }
            ) { (batch) throws(StorageError) in
                try checkForStop(progress)
                defer { progress.advance(by: batch.changes.count { if case .create = $0.change { true } else { false } }) }
                for (index, (record, start)) in zip(batch.changes, batch.recordStarts).enumerated()
                where record.sequence > sequence && record.sequence <= limit {
                    guard record.sequence == store.sequence + 1 else {
                        throw .brokenHistory(
                            "\(segment.file) holds change \(record.sequence), but the changes before it end at \(store.sequence); a log file is missing"
                        )
                    }
                    do throws(StoreError) {
                        // The change `replayPrefetchDistance` ahead starts loading its index entries, so that
                        // the cache misses of a creation overlap with the replay of those before it.
                        let ahead = index + Self.replayPrefetchDistance
                        try store.replay(
                            record.change, context: record.context, sequence: record.sequence,
                            upcoming: ahead < batch.changes.count ? batch.changes[ahead].change : nil
                        )
                    } catch {
                        throw .corruptLog(file: segment.file, offset: start + LogFormat.recordHeaderLength, problem: error.message)
                    }
                    report.replayedRecords += 1
                }
            }
            guard repair else { continue }
            if let offset = scan.tornTailOffset {
                guard isLast else {
                    throw .corruptLog(
                        file: segment.file, offset: offset,
                        problem: "the file ends in the middle of a record, but a newer log file follows it"
                    )
                }
                logger.warning(
                    "dropped a torn last log record (a crash cut it short; it was never acknowledged)",
                    metadata: ["file": "\(segment.file)", "offset": "\(offset)", "bytes": "\(scan.tornBytes)"]
                )
                if offset == 0 {
                    try FileSystem.remove(directory + "/" + segment.file)
                } else {
                    try FileSystem.truncate(directory + "/" + segment.file, to: offset)
                }
                report.droppedTornTail = (segment.file, offset, scan.tornBytes)
            } else if let offset = scan.unusedTailOffset {
                // Zeros the log writer prepared and a crash left unused: no record, nothing lost. Cut so
                // that the file, which is never written again, holds only its records.
                try FileSystem.truncate(directory + "/" + segment.file, to: offset)
                logger.debug(
                    "trimmed unused zero-filled space after the last log record",
                    metadata: ["file": "\(segment.file)", "offset": "\(offset)", "bytes": "\(scan.unusedBytes)"]
                )
            }
        }
    }

    /// Throws `StorageError.loadingStopped` once `progress` was asked to stop.
    private static func checkForStop(_ progress: LoadingProgress) throws(StorageError) {
        if progress.isStopRequested { throw .loadingStopped }
    }

    /// Removes snapshots older than the one holding `sequence`, and log segments whose records are all
    /// at most `sequence`. Returns the names removed.
    private static func removeCovered(by sequence: UInt64, in directory: String) throws(StorageError) -> [String] {
        let inventory = try Inventory(directory: directory)
        var removed: [String] = []
        for snapshot in inventory.snapshots where snapshot.sequence < sequence {
            removed.append(snapshot.file)
        }
        for (index, segment) in inventory.segments.enumerated().dropLast()
        where inventory.segments[index + 1].firstSequence <= sequence + 1 {
            removed.append(segment.file)
        }
        for file in removed { try FileSystem.remove(directory + "/" + file) }
        if !removed.isEmpty { try FileSystem.syncDirectory(directory) }
        return removed
    }

    // MARK: Snapshots

    /// Writes a snapshot of the whole state now, then removes the log and the older snapshot it covers.
    /// Checks and writes go on meanwhile. One snapshot runs at a time; a second call waits for the first.
    public func snapshot() throws(StorageError) -> SnapshotReport {
        snapshotState.lock()
        defer { snapshotState.unlock() }
        return try writeSnapshot()
    }

    /// Like `snapshot()`, but does nothing and returns `nil` when nothing changed since the last snapshot
    /// (or since the start, when the state came entirely from a snapshot): for the periodic snapshots.
    public func snapshotIfChanged() throws(StorageError) -> SnapshotReport? {
        snapshotState.lock()
        defer { snapshotState.unlock() }
        // What the newest snapshot on disk holds: the last one written, or at the start the loaded one
        // when no log came after it (an empty directory counts as a snapshot of nothing).
        let covered = lastSnapshot?.sequence ?? (recovery.replayedRecords == 0 ? recovery.snapshotSequence : nil)
        if let covered, covered == store.sequence { return nil }
        return try writeSnapshot()
    }

    /// Caller holds `snapshotState`.
    private func writeSnapshot() throws(StorageError) -> SnapshotReport {
        // While the disk is full or failed, a snapshot would meet the same disk; the log holds everything.
        if let outage = log.currentOutage { throw .writesUnavailable(outage.reason) }
        let started = ContinuousClock.now
        // Erased memberships are left out here, off the store's lock: no snapshot holds an erased person.
        let image = store.image { sequence in log.rotate(after: sequence) }.withoutErasedMemberships()
        // The image may hold changes whose writers still wait for the log: a snapshot of them would keep
        // a change the log then fails (and whose writer hears it failed). So it is written only once the
        // log holds everything in it.
        if case .failure(let failure) = log.waitUntilAcknowledged(image.sequence) {
            throw .writesUnavailable(failure.reason)
        }
        let written = try SnapshotFile.write(image, to: directory)
        _ = log.waitForRotation(after: image.sequence)
        let removed = try Self.removeCovered(by: image.sequence, in: directory)
        let report = SnapshotReport(
            file: written.file, sequence: image.sequence, bytes: written.bytes,
            membershipCount: image.memberships.count, duration: ContinuousClock.now - started
        )
        lastSnapshot = report
        let (now, logBytes) = (store.now(), log.statistics.bytes)
        newestWritten.withLockedValue { $0 = (report, now, logBytes, $0.count + 1) }
        logger.info(
            "wrote a snapshot",
            metadata: [
                "file": "\(report.file)", "change": "\(report.sequence)", "bytes": "\(report.bytes)",
                "memberships": "\(report.membershipCount)", "ms": "\(report.milliseconds)",
                "removed": "\(removed.joined(separator: " "))",
            ]
        )
        return report
    }

    /// The newest snapshot and what the log holds beyond it. Cheap: a few locked reads, no file access;
    /// it does not wait for a snapshot being written.
    public var persistenceStatus: PersistenceStatus {
        let logCounters = log.statistics
        let lastChange = store.sequence
        let last = newestWritten.withLockedValue { $0 }
        // Before this process writes a snapshot, the log since the loaded one includes the segments found
        // at start (a restart after `kill -9` replays them too).
        let sinceSnapshot = last.report == nil ? recoveredLogBytes + logCounters.bytes : logCounters.bytes - last.logBytes
        return PersistenceStatus(
            fsync: log.policy,
            lastChange: lastChange,
            snapshotFile: last.report?.file ?? recovery.snapshotFile,
            snapshotChange: last.report?.sequence ?? recovery.snapshotSequence,
            snapshotBytes: last.report?.bytes ?? loadedSnapshotBytes,
            snapshotWrittenAt: last.at,
            snapshotMilliseconds: last.report?.milliseconds,
            snapshotsWritten: last.count,
            logBytesSinceSnapshot: max(0, sinceSnapshot),
            logBytesWritten: logCounters.bytes,
            logSyncs: logCounters.syncs,
            outage: log.currentOutage,
            logOutages: logCounters.outages,
            groupCommit: logCounters.groupCommit
        )
    }

    // MARK: Failures

    /// Puts the store back to change `acknowledged`, the last one the log holds, after the log failed:
    /// rebuilt from the newest snapshot and the log, as a restart would, then swapped in at once. The
    /// writers of the undone changes are answered only after this returns, so none of them is told its
    /// change failed while a reader could still see it. Costs a recovery's time (seconds for millions
    /// of memberships), during which reads still see the undone changes: rare, and only after a failure.
    private func rollBack(to acknowledged: UInt64) {
        snapshotState.lock()  // no snapshot removes files while they are read
        defer { snapshotState.unlock() }
        let started = ContinuousClock.now
        let undone = store.sequence &- acknowledged
        do throws(StorageError) {
            let inventory = try Inventory(directory: directory)
            var image = StoreImage(sequence: 0, memberships: MembershipTable(), catalog: [:])
            if let newest = inventory.snapshots.last { image = try SnapshotFile.read(newest.file, in: directory) }
            let rebuilt = EntitlementStore(restoring: image, clock: clock, feedRetention: store.feedRetention)
            var report = recovery
            try Self.replay(
                inventory.segments, into: rebuilt, after: image.sequence, through: acknowledged, directory: directory,
                report: &report, logger: logger, repair: false
            )
            guard rebuilt.sequence == acknowledged else {
                throw .brokenHistory("the log holds changes up to \(rebuilt.sequence), but it acknowledged \(acknowledged)")
            }
            store.restore(from: rebuilt)
            logger.warning(
                "undid the changes the log could not keep: the store holds what the data directory holds again",
                metadata: ["change": "\(acknowledged)", "undone": "\(undone)", "took": "\(ContinuousClock.now - started)"]
            )
        } catch {
            // Memory holds changes that were never made durable and cannot be put back: answering reads
            // from it would show them. Stop, as PostgreSQL does; a restart recovers from the disk.
            logger.critical("cannot undo the changes the log could not keep: \(error.message). Stopping; restart entitled to recover from the data directory")
            exit(EXIT_FAILURE)
        }
    }

    /// Writes and syncs the rest of the log and releases the data directory. Take the final snapshot first.
    public func close() {
        log.close()
        log.setRollbackHandler(nil)
        lock.release()
    }
}

/// The files of a data directory, by kind, in sequence order.
struct Inventory {
    struct Snapshot { let file: String; let sequence: UInt64 }
    struct Segment { let file: String; let firstSequence: UInt64 }

    var snapshots: [Snapshot] = []
    var segments: [Segment] = []
    var temporaryFiles: [String] = []

    init(directory: String) throws(StorageError) {
        for name in try FileSystem.listDirectory(directory) {
            if let sequence = SnapshotFormat.sequence(ofFileNamed: name) {
                snapshots.append(Snapshot(file: name, sequence: sequence))
            } else if let first = LogFormat.firstSequence(ofSegmentNamed: name) {
                segments.append(Segment(file: name, firstSequence: first))
            } else if name.hasSuffix(SnapshotFormat.suffix + SnapshotFormat.temporarySuffix) {
                temporaryFiles.append(name)
            }
        }
        snapshots.sort { $0.sequence < $1.sequence }
        segments.sort { $0.firstSequence < $1.firstSequence }
    }
}
