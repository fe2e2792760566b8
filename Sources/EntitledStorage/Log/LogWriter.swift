import EntitledCore
import Logging

/// The append-only log: the `ChangeJournal` of a durable `EntitlementStore`.
///
/// `record` (called under the store's write lock) only encodes the change and appends it to a buffer in
/// memory. A flush takes everything buffered, writes it with one `write` and, with `FsyncPolicy.always`,
/// one `fdatasync`, then acknowledges every change up to the last one it wrote: writers that arrive while
/// a sync is running share the next one (group commit), so 50 concurrent writers pay a handful of syncs,
/// not 50. An event loop with one connection waiting flushes on its own thread (`commitIfIdle`); a writer
/// thread flushes for loops with several (`commitOnWriterThread`, so that they serve on meanwhile), for
/// callers of `whenAcknowledged`, for snapshots' log rotations, and within 10 ms for records nobody
/// committed.
///
/// With `always`, a `SegmentPreallocator` keeps zeros on disk ahead of the records, so a sync writes
/// data only and not the file's new size too; the zeros left after the last record are cut off when a
/// segment is closed (and by recovery after a crash).
///
/// A failed write or sync leaves no trace (see `LogOutage` for the two kinds): the segments are cut back to
/// the acknowledged records, `record` refuses every change meanwhile (the store then refuses the write),
/// the rollback handler (`DurableStore`) puts memory back to what the log holds, and only then is every
/// change not yet acknowledged reported failed, so that no reader sees a change after its writer was told
/// it failed. A full disk is then tried again with a backoff until it takes writes (the resume barrier
/// runs first); any other failure stops writes until a restart. Reads go on from memory throughout.
public final class LogWriter: ChangeJournal, @unchecked Sendable {
    // @unchecked: every mutable property is guarded by `condition`, except the file state, which
    // `ioLock` guards (and `start` touches before any other thread can).

    public let directory: String
    public let policy: FsyncPolicy
    let logger: Logger
    let condition = PthreadCondition()

    var pending: [UInt8] = []
    /// When the oldest record in `pending` was recorded.
    private var pendingSince = ContinuousClock.now
    /// How many records `pending` holds.
    var pendingRecords = 0
    private var spare: [UInt8] = []
    var pendingLastSequence: UInt64 = 0
    /// Where in `pending` a new segment must start (a snapshot was captured there), and its first sequence.
    var rotations: [(offset: Int, firstSequence: UInt64)] = []
    var waiters: [(sequence: UInt64, callback: @Sendable (Result<Void, JournalError>) -> Void)] = []
    var acknowledged: UInt64 = 0
    /// The first sequence of the segment being written, once the writer thread has opened it.
    var currentSegmentFirstSequence: UInt64 = 0
    /// Set while the log takes no changes.
    var outage: LogOutage?
    /// Set from a failure until the rollback handler has put memory back and the waiters were failed.
    var rollbackPending = false
    /// The disk could not even be cut back to the acknowledged records: a restart may replay changes
    /// that were answered failed. Said in their answers.
    var cutFailed = false
    /// When a full disk is tried again, and the wait after that.
    var nextRetry = ContinuousClock.now
    var retryDelay = LogWriter.firstRetryDelay
    /// Threads in `waitUntilAcknowledged`: acknowledgements wake them only when there are any, so a write
    /// does not wake the idle writer thread for nobody.
    private var acknowledgementWatchers = 0
    /// Puts memory back to change `acknowledged` after a failure; runs on the writer thread.
    var rollbackHandler: (@Sendable (_ acknowledged: UInt64) -> Void)?
    /// Runs on the writer thread before writes resume after a full disk (see `setResumeBarrier`).
    var resumeBarrier: (@Sendable () -> Bool)?
    private var state = Lifecycle.notStarted
    var counters = Statistics()
    /// The writer thread sleeps with nothing to look after, until a signal: the next record wakes it.
    private var writerIsIdle = false

    /// What the log has done since it started.
    public struct Statistics: Sendable, Hashable {
        /// Changes recorded.
        public var records = 0
        /// Batches written (one `write` each, or one per segment when a batch spans a rotation).
        public var batches = 0
        /// `fdatasync` calls for acknowledgements (segment rotations not counted).
        public var syncs = 0
        /// Bytes written to segments, headers included.
        public var bytes = 0
        /// Times the writer thread woke up: its timer while records wait, or a record, waiter, rotation
        /// or `close` that needed it. An idle log's writer thread does not wake.
        public var writerWakeUps = 0
        /// Failures of the disk (each undone and, for a full disk, tried again until it took writes).
        public var outages = 0
        /// Batch sizes, sync times and waits.
        public var groupCommit = GroupCommitStatistics()
        /// Times writes resumed after a full disk.
        public var resumes = 0
    }

    /// Why the log takes no changes right now; `nil` while it takes them.
    public var currentOutage: LogOutage? {
        condition.lock()
        defer { condition.unlock() }
        return outage
    }

    /// The first wait before a full disk is tried again; it doubles up to `longestRetryDelay`.
    static let firstRetryDelay = Duration.milliseconds(100)
    static let longestRetryDelay = Duration.seconds(2)

    /// A copy of the counters.
    public var statistics: Statistics {
        condition.lock()
        defer { condition.unlock() }
        return counters
    }

    private enum Lifecycle { case notStarted, running, closing, closed }

    /// Serializes the file I/O of `flushPending`; guards `segment`, `spare`, `lastSync`, `unsyncedWrites`.
    /// A `PthreadMutex` rather than an `NIOLock` because `commitIfIdle` needs `tryLock`.
    let ioLock = PthreadMutex()
    /// The segment being written; `end` is where its records end (the next record's offset).
    var segment: (descriptor: Int32, path: String, firstSequence: UInt64, end: Int)?
    /// Where the acknowledged records end: the segment holding the last of them, and their end in it.
    /// A failure cuts the log back to here.
    var acknowledgedEnd: (firstSequence: UInt64, path: String, end: Int)?
    /// Zeros ahead of the records (`FsyncPolicy.always` only, where every sync counts).
    let preallocator: SegmentPreallocator?
    private var lastSync = ContinuousClock.now
    private var unsyncedWrites = false
    /// A copy of `unsyncedWrites` readable under `condition`.
    private var unsyncedWritesHint = false

    /// Called on the writer thread just before each acknowledgement sync: lets tests hold a sync open
    /// while more writers arrive.
    private let beforeSync: (@Sendable () -> Void)?

    /// A log in `directory` (which must exist). Nothing is written before `start(nextSequence:)`.
    public convenience init(directory: String, policy: FsyncPolicy, logger: Logger = Logger(label: "entitled.log")) {
        self.init(directory: directory, policy: policy, logger: logger, beforeSync: nil)
    }

    init(
        directory: String, policy: FsyncPolicy, logger: Logger, beforeSync: (@Sendable () -> Void)?,
        preallocation: SegmentPreallocator.Tuning = .standard
    ) {
        self.directory = directory
        self.policy = policy
        self.logger = logger
        self.beforeSync = beforeSync
        self.preallocator = policy == .always ? SegmentPreallocator(tuning: preallocation, logger: logger) : nil
    }

    /// Opens a new segment whose first record will be `nextSequence` and starts the writer thread.
    /// Everything before `nextSequence` counts as acknowledged (it was recovered from disk).
    /// How far the log has got, for readers that do not take its lock (`LogProgress`).
    public let progress = LogProgress()

    public func start(nextSequence: UInt64) throws(StorageError) {
        try openSegment(firstSequence: nextSequence)
        acknowledgedEnd = segment.map { ($0.firstSequence, $0.path, $0.end) }
        condition.lock()
        acknowledged = nextSequence - 1
        pendingLastSequence = nextSequence - 1
        progress.noteRecorded(nextSequence - 1)
        progress.noteAcknowledged(nextSequence - 1)
        currentSegmentFirstSequence = nextSequence
        state = .running
        condition.unlock()
        // A thread of its own (not a Swift concurrency task): it blocks in `fdatasync` and on the condition.
        DetachedThread.start(name: "entitled-log-writer") { [self] in writerLoop() }
    }

    // MARK: ChangeJournal

    public func record(_ change: StoreChange, context: ChangeContext, sequence: UInt64) throws(JournalError) {
        condition.lock()
        defer { condition.unlock() }
        if let outage { throw .outage(cause: outage.reason, changeMayRemain: false) }
        guard state == .running else { throw .closed }
        if pending.isEmpty {
            pendingSince = ContinuousClock.now
            // The first record after a quiet spell: the writer thread starts looking after it (below).
            // Every wake-up here is a broadcast: a `waitForRotation` or `close` waiter on the same
            // condition could take a `signal` meant for the writer thread, which would sleep on.
            if writerIsIdle { condition.broadcast() }
        }
        // Encoded straight into `pending`, under the lock that the writer thread takes only to swap the
        // buffer out (a fraction of a microsecond): a buffer of its own cost each record an allocation
        // and a copy (perf, bulk load of grants: 2% of a grant's CPU).
        LogFormat.appendRecord(change, sequence: sequence, context: context, to: &pending)
        pendingRecords += 1
        pendingLastSequence = sequence
        // Before the change takes effect in memory (the store calls this first): a read that sees it
        // finds it recorded.
        progress.noteRecorded(sequence)
        counters.records += 1
        // No wake-up for the records after it: whoever needs the change acknowledged calls
        // `commitIfIdle(through:)` (doing the I/O on its own thread, no hop) or `whenAcknowledged` (which
        // wakes the writer thread).
    }

    // MARK: Acknowledgement

    /// The last change that may be acknowledged: synced with `always`, written to the OS otherwise.
    public var acknowledgedSequence: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return acknowledged
    }

    /// Calls `callback` (on the writer thread, or at once) when change `sequence` may be acknowledged,
    /// or with the failure that means it never will be.
    public func whenAcknowledged(
        _ sequence: UInt64,
        _ callback: @escaping @Sendable (Result<Void, JournalError>) -> Void
    ) {
        condition.lock()
        if sequence <= acknowledged {
            condition.unlock()
            callback(.success(()))
        } else if let failure = settledFailure {
            condition.unlock()
            callback(.failure(failure))
        } else {
            waiters.append((sequence, callback))
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Makes change `sequence` acknowledgeable before returning, if no other thread is writing the log:
    /// writes (and with `.always` syncs) everything recorded so far on the calling thread, so changes
    /// recorded by other threads meanwhile ride along (group commit) and the caller makes no thread hop.
    /// Returns `nil` when another thread is writing the log right now: the caller then waits with
    /// `whenAcknowledged` (the writer thread writes the rest right after) instead of blocking, so an
    /// event loop never waits for another loop's sync; and while memory is put back after a failure, so
    /// that the writer hears of it only after no reader can see the change any more.
    public func commitIfIdle(through sequence: UInt64) -> Result<Void, JournalError>? {
        if let settled = settled(sequence) { return settled }
        guard ioLock.tryLock() else {
            condition.lock()
            counters.groupCommit.handedOff += 1
            condition.unlock()
            return nil
        }
        flushPendingHoldingIOLock(closing: false)
        ioLock.unlock()
        // Still open only while memory is being put back after a failure: the caller then waits.
        return settled(sequence)
    }

    /// Has the writer thread write (and with `.always` sync) everything recorded so far at once, for an
    /// event loop that serves on meanwhile instead of blocking in the sync. Returns the outcome when it is
    /// known already (`callback` is then not called); otherwise `nil`, and calls `callback` on the writer
    /// thread when change `sequence` may be acknowledged or never will be. Counted in `handedOff`.
    public func commitOnWriterThread(
        through sequence: UInt64,
        _ callback: @escaping @Sendable (Result<Void, JournalError>) -> Void
    ) -> Result<Void, JournalError>? {
        condition.lock()
        defer { condition.unlock() }
        if sequence <= acknowledged { return .success(()) }
        if let failure = settledFailure { return .failure(failure) }
        counters.groupCommit.handedOff += 1
        waiters.append((sequence, callback))
        condition.broadcast()
        return nil
    }

    /// Success when `sequence` is acknowledged, the failure when the log failed, `nil` otherwise.
    private func settled(_ sequence: UInt64) -> Result<Void, JournalError>? {
        condition.lock()
        defer { condition.unlock() }
        if sequence <= acknowledged { return .success(()) }
        if let failure = settledFailure { return .failure(failure) }
        return nil
    }

    /// The failure of every change after `acknowledged`, once it is settled: not while memory is being
    /// put back (its writers are answered after that). Caller holds `condition`.
    private var settledFailure: JournalError? {
        if let outage { return rollbackPending ? nil : .outage(cause: outage.reason, changeMayRemain: cutFailed) }
        if state == .closed { return .closed }
        return nil
    }

    /// Waits until change `sequence` is acknowledged, or fails as soon as the log does (without waiting for
    /// memory to be put back: the caller may hold what the rollback needs). For snapshots, which must
    /// never hold a change the log did not acknowledge.
    public func waitUntilAcknowledged(_ sequence: UInt64) -> Result<Void, JournalError> {
        condition.lock()
        defer { condition.unlock() }
        acknowledgementWatchers += 1
        defer { acknowledgementWatchers -= 1 }
        if sequence > acknowledged, outage == nil, state == .running {
            // The writer thread writes them within a few milliseconds; a waiter makes it do so at once.
            waiters.append((sequence, { _ in }))
            condition.broadcast()
        }
        while sequence > acknowledged, outage == nil, state == .running || state == .closing {
            condition.wait()
        }
        if sequence <= acknowledged { return .success(()) }
        if let outage { return .failure(.outage(cause: outage.reason, changeMayRemain: false)) }
        return .failure(.closed)
    }

    /// Sets what puts memory back to change `acknowledged` after a failure (`DurableStore` rebuilds its
    /// store from the data directory). Runs on the writer thread, before the failed writers are answered.
    public func setRollbackHandler(_ handler: (@Sendable (_ acknowledged: UInt64) -> Void)?) {
        condition.lock()
        rollbackHandler = handler
        condition.unlock()
    }

    /// Sets what runs before writes resume after a full disk: the server waits there until every event
    /// loop has finished the turn it was in, so that a write numbered before the failure can no longer
    /// be confused with the new change that gets its number after the rollback. It returns `false` when it
    /// could not make sure (a loop did not answer in time): writes then stay refused until the next try.
    public func setResumeBarrier(_ barrier: (@Sendable () -> Bool)?) {
        condition.lock()
        resumeBarrier = barrier
        condition.unlock()
    }

    // MARK: Snapshots and shutdown

    /// Makes the record after `sequence` start a new segment. Call it while no change can be recorded
    /// (`EntitlementStore.image(atCapture:)`), so that every record in older segments is at most `sequence`.
    public func rotate(after sequence: UInt64) {
        condition.lock()
        rotations.append((pending.count, sequence + 1))
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the writer thread has opened the segment that starts after `sequence` (or failed).
    /// Returns the first sequence of the segment being written.
    public func waitForRotation(after sequence: UInt64) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        while currentSegmentFirstSequence <= sequence, outage == nil, state == .running {
            condition.wait()
        }
        return currentSegmentFirstSequence
    }

    /// Writes and syncs everything recorded, then stops the writer thread. Later changes are refused.
    public func close() {
        condition.lock()
        guard state == .running else {
            condition.unlock()
            return
        }
        state = .closing
        condition.broadcast()
        while state != .closed { condition.wait() }
        condition.unlock()
    }

    // MARK: The writer thread

    private func writerLoop() {
        while true {
            condition.lock()
            while rotations.isEmpty, state == .running, !rollbackPending {
                if let outage {
                    // Nothing to write until the disk takes writes again (records are refused): a full
                    // disk is tried again when due, a failed one never.
                    let now = ContinuousClock.now
                    if outage.resumesByItself, now >= nextRetry { break }
                    if outage.resumesByItself { condition.wait(timeout: nextRetry - now) } else { condition.wait() }
                    continue
                }
                if !pending.isEmpty, !waiters.isEmpty { break }  // someone waits for these records
                if pending.isEmpty, !(policy == .everysec && unsyncedWritesHint) {
                    // Nothing to look after: sleep until a record, a waiter, a rotation or `close`, so an
                    // idle or read-only server has no thread waking on a timer.
                    writerIsIdle = true
                    condition.wait()
                    writerIsIdle = false
                    counters.writerWakeUps += 1
                    continue
                }
                // `record` wakes this thread only for the first of a batch (a wake-up per write would cost
                // a context switch per write), so it looks every few milliseconds for records nobody has
                // committed and for an everysec sync falling due: at most 10 ms late, at about 200 cheap
                // wake-ups a second while writes come. Records younger than 5 ms are left to the event
                // loop that recorded them, which commits them at the end of its turn: taking them here
                // made that loop wait for this thread's sync and a hop back.
                condition.wait(timeout: .milliseconds(5))
                counters.writerWakeUps += 1
                let uncommitted = !pending.isEmpty && ContinuousClock.now - pendingSince >= .milliseconds(5)
                if uncommitted || (policy == .everysec && unsyncedWritesHint) { break }
            }
            let closing = state == .closing
            let rollback = rollbackPending
            let retry = !closing && !rollback && outage?.resumesByItself == true && ContinuousClock.now >= nextRetry
            condition.unlock()

            if rollback {
                rollBack()
                continue
            }
            if retry {
                tryToResume()
                continue
            }
            flushPending(closing: closing)

            if closing {
                condition.lock()
                // (A failure of this last flush is undone first, so that its writers hear why.)
                let drained = pending.isEmpty && rotations.isEmpty && !rollbackPending
                condition.unlock()
                guard drained else { continue }
                ioLock.lock()
                do throws(StorageError) {
                    try closeSegment()
                } catch {
                    // Everything is synced already; only the unused zeros stay, which recovery cuts.
                    logger.warning("could not cut the unused space off the last log segment: \(error.message)")
                    if let segment { closeDescriptor(segment.descriptor) }
                    segment = nil
                }
                preallocator?.stop()
                ioLock.unlock()
                condition.lock()
                state = .closed
                let stranded = waiters
                waiters.removeAll()
                condition.broadcast()
                condition.unlock()
                for waiter in stranded { waiter.callback(.failure(.closed)) }
                return
            }
        }
    }

    /// Takes everything recorded so far, writes it (opening new segments at rotations), syncs as the
    /// policy says, and acknowledges it. One caller at a time (`ioLock`): the writer thread or a
    /// connection's thread in `commitIfIdle(through:)`.
    private func flushPending(closing: Bool) {
        ioLock.lock()
        defer { ioLock.unlock() }
        flushPendingHoldingIOLock(closing: closing)
    }

    private func flushPendingHoldingIOLock(closing: Bool) {
        condition.lock()
        swap(&pending, &spare)
        let batchRecords = pendingRecords
        pendingRecords = 0
        let batchSince = pendingSince
        let batchLastSequence = pendingLastSequence
        let batchRotations = rotations
        rotations.removeAll()
        let failedAlready = outage != nil
        condition.unlock()
        defer { spare.removeAll(keepingCapacity: spare.capacity <= 1 << 20) }
        guard !failedAlready else { return }

        do throws(StorageError) {
            var start = 0
            for rotation in batchRotations where rotation.firstSequence > (segment?.firstSequence ?? 0) {
                // (A segment that starts there already, with nothing in it yet, needs no successor.)
                try writeToSegment(spare[start..<rotation.offset])
                try closeSegment()
                try openSegment(firstSequence: rotation.firstSequence)
                start = rotation.offset
                condition.lock()
                currentSegmentFirstSequence = rotation.firstSequence
                condition.broadcast()
                condition.unlock()
            }
            try writeToSegment(spare[start...])
            if !spare.isEmpty { unsyncedWrites = true }
            let syncDue = policy == .everysec && ContinuousClock.now - lastSync >= .seconds(1)
            var synced = false
            var syncTime = Duration.zero
            if unsyncedWrites, policy == .always || syncDue || closing {
                beforeSync?()
                let syncStarted = ContinuousClock.now
                try syncSegment()
                lastSync = ContinuousClock.now
                syncTime = lastSync - syncStarted
                unsyncedWrites = false
                synced = true
            }
            condition.lock()
            unsyncedWritesHint = unsyncedWrites
            if !spare.isEmpty {
                counters.batches += 1
                counters.bytes += spare.count
            }
            if synced { counters.syncs += 1 }
            if batchRecords > 0 {
                let wait = Self.nanoseconds(ContinuousClock.now - batchSince)
                counters.groupCommit.groups += 1
                counters.groupCommit.changes += batchRecords
                counters.groupCommit.largestGroup = max(counters.groupCommit.largestGroup, batchRecords)
                counters.groupCommit.oldestWaitNanoseconds &+= wait
                counters.groupCommit.longestWaitNanoseconds = max(counters.groupCommit.longestWaitNanoseconds, wait)
            }
            if synced {
                let sync = Self.nanoseconds(syncTime)
                counters.groupCommit.syncNanoseconds &+= sync
                counters.groupCommit.longestSyncNanoseconds = max(counters.groupCommit.longestSyncNanoseconds, sync)
            }
            condition.unlock()
            if !spare.isEmpty {
                acknowledgedEnd = segment.map { ($0.firstSequence, $0.path, $0.end) }
                acknowledge(through: batchLastSequence)
            }
        } catch {
            fail(error)
        }
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds / 1_000_000_000))
    }

    private func acknowledge(through sequence: UInt64) {
        condition.lock()
        acknowledged = max(acknowledged, sequence)
        progress.noteAcknowledged(acknowledged)
        if acknowledgementWatchers > 0 { condition.broadcast() }
        var ready: [@Sendable (Result<Void, JournalError>) -> Void] = []
        waiters.removeAll { waiter in
            guard waiter.sequence <= sequence else { return false }
            ready.append(waiter.callback)
            return true
        }
        condition.unlock()
        for callback in ready { callback(.success(())) }
    }

    /// Where the records of the segment being written end: its logical length, which is shorter than the
    /// file while zeros are prepared after the records. For tests.
    var currentSegmentLength: Int? {
        ioLock.lock()
        defer { ioLock.unlock() }
        return segment?.end
    }

    /// What the preallocator has done, or `nil` without one. For tests and the benchmark's explanations.
    var preallocationStatistics: SegmentPreallocator.Statistics? {
        preallocator?.statistics
    }
}
