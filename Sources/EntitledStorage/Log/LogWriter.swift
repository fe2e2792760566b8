import EntitledCore
import Logging

/// The append-only log: the `ChangeJournal` of a durable `EntitlementStore`.
///
/// `record` (called under the store's write lock) only encodes the change and appends it to a buffer in
/// memory. A flush takes everything buffered, writes it with one `write` and, with `FsyncPolicy.always`,
/// one `fdatasync`, then acknowledges every change up to the last one it wrote: writers that arrive while
/// a sync is running share the next one (group commit), so 50 concurrent writers pay a handful of syncs,
/// not 50. Event loops flush on their own thread (`commitIfIdle`); a writer thread flushes for callers
/// of `whenAcknowledged`, for snapshots' log rotations, and within 10 ms for records nobody committed.
///
/// With `always`, a `SegmentPreallocator` keeps zeros on disk ahead of the records, so a sync writes
/// data only and not the file's new size too; the zeros left after the last record are cut off when a
/// segment is closed (and by recovery after a crash).
///
/// A failed write or sync is final: every change not yet acknowledged is reported failed, `record`
/// refuses every later change (the store then refuses the write), and the failure is logged at
/// `critical`. Reads go on from memory.
public final class LogWriter: ChangeJournal, @unchecked Sendable {
    // @unchecked: every mutable property is guarded by `condition`, except the file state, which
    // `ioLock` guards (and `start` touches before any other thread can).

    public let directory: String
    public let policy: FsyncPolicy
    private let logger: Logger
    private let condition = PthreadCondition()

    private var pending: [UInt8] = []
    /// When the oldest record in `pending` was recorded.
    private var pendingSince = ContinuousClock.now
    private var spare: [UInt8] = []
    private var pendingLastSequence: UInt64 = 0
    /// Where in `pending` a new segment must start (a snapshot was captured there), and its first sequence.
    private var rotations: [(offset: Int, firstSequence: UInt64)] = []
    private var waiters: [(sequence: UInt64, callback: @Sendable (Result<Void, JournalError>) -> Void)] = []
    private var acknowledged: UInt64 = 0
    /// The first sequence of the segment being written, once the writer thread has opened it.
    private var currentSegmentFirstSequence: UInt64 = 0
    private var failure: JournalError?
    private var state = Lifecycle.notStarted
    private var counters = Statistics()
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
    }

    /// A copy of the counters.
    public var statistics: Statistics {
        condition.lock()
        defer { condition.unlock() }
        return counters
    }

    private enum Lifecycle { case notStarted, running, closing, closed }

    /// Serializes the file I/O of `flushPending`; guards `segment`, `spare`, `lastSync`, `unsyncedWrites`.
    /// A `PthreadMutex` rather than an `NIOLock` because `commitIfIdle` needs `tryLock`.
    private let ioLock = PthreadMutex()
    /// The segment being written; `end` is where its records end (the next record's offset).
    private var segment: (descriptor: Int32, path: String, firstSequence: UInt64, end: Int)?
    /// Zeros ahead of the records (`FsyncPolicy.always` only, where every sync counts).
    private let preallocator: SegmentPreallocator?
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
    public func start(nextSequence: UInt64) throws(StorageError) {
        try openSegment(firstSequence: nextSequence)
        condition.lock()
        acknowledged = nextSequence - 1
        pendingLastSequence = nextSequence - 1
        currentSegmentFirstSequence = nextSequence
        state = .running
        condition.unlock()
        // A thread of its own (not a Swift concurrency task): it blocks in `fdatasync` and on the condition.
        DetachedThread.start(name: "entitled-log-writer") { [self] in writerLoop() }
    }

    // MARK: ChangeJournal

    public func record(_ change: StoreChange, context: ChangeContext, sequence: UInt64) throws(JournalError) {
        var encoded: [UInt8] = []
        encoded.reserveCapacity(256)  // a grant's record is about 100 bytes: one allocation, no regrowth
        LogFormat.appendRecord(LoggedChange(sequence: sequence, change: change, context: context), to: &encoded)
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
        guard state == .running else { throw JournalError(reason: "the log is closed") }
        if pending.isEmpty {
            pendingSince = ContinuousClock.now
            // The first record after a quiet spell: the writer thread starts looking after it (below).
            // Every wake-up here is a broadcast: a `waitForRotation` or `close` waiter on the same
            // condition could take a `signal` meant for the writer thread, which would sleep on.
            if writerIsIdle { condition.broadcast() }
        }
        pending.append(contentsOf: encoded)
        pendingLastSequence = sequence
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
        } else if let failure {
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
    /// event loop never waits for another loop's sync.
    public func commitIfIdle(through sequence: UInt64) -> Result<Void, JournalError>? {
        if let settled = settled(sequence) { return settled }
        guard ioLock.tryLock() else { return nil }
        flushPendingHoldingIOLock(closing: false)
        ioLock.unlock()
        return settled(sequence) ?? .failure(JournalError(reason: "the log is closed"))
    }

    /// Success when `sequence` is acknowledged, the failure when the log failed, `nil` otherwise.
    private func settled(_ sequence: UInt64) -> Result<Void, JournalError>? {
        condition.lock()
        defer { condition.unlock() }
        if sequence <= acknowledged { return .success(()) }
        if let failure { return .failure(failure) }
        return nil
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
        while currentSegmentFirstSequence <= sequence, failure == nil, state == .running {
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
            while rotations.isEmpty, state == .running {
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
            condition.unlock()

            flushPending(closing: closing)

            if closing {
                condition.lock()
                let drained = pending.isEmpty && rotations.isEmpty
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
                for waiter in stranded { waiter.callback(.failure(JournalError(reason: "the log was closed"))) }
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
        let batchLastSequence = pendingLastSequence
        let batchRotations = rotations
        rotations.removeAll()
        let failedAlready = failure != nil
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
            if unsyncedWrites, policy == .always || syncDue || closing {
                beforeSync?()
                try syncSegment()
                lastSync = ContinuousClock.now
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
            condition.unlock()
            if !spare.isEmpty { acknowledge(through: batchLastSequence) }
        } catch {
            fail(JournalError(reason: error.message))
        }
    }

    private func acknowledge(through sequence: UInt64) {
        condition.lock()
        acknowledged = max(acknowledged, sequence)
        var ready: [@Sendable (Result<Void, JournalError>) -> Void] = []
        waiters.removeAll { waiter in
            guard waiter.sequence <= sequence else { return false }
            ready.append(waiter.callback)
            return true
        }
        condition.unlock()
        for callback in ready { callback(.success(())) }
    }

    private func fail(_ error: JournalError) {
        logger.critical(
            "the log cannot be written: \(error.reason). Changes are refused from now on (reads go on); fix the disk and restart entitled"
        )
        condition.lock()
        failure = error
        let failed = waiters
        waiters.removeAll()
        condition.broadcast()
        condition.unlock()
        for waiter in failed { waiter.callback(.failure(error)) }
    }

    // MARK: Segment files (writer thread, or `start` before it runs)

    private func openSegment(firstSequence: UInt64) throws(StorageError) {
        let path = directory + "/" + LogFormat.segmentName(firstSequence: firstSequence)
        let descriptor = try FileSystem.createFile(path)
        let header = LogFormat.segmentHeader(firstSequence: firstSequence)
        segment = (descriptor, path, firstSequence, header.count)
        try FileSystem.writeAll(descriptor, header, path: path)
        // The first zeros go with the header's sync, so the first records need not wait for the
        // preallocator's first step. Only ever a cost saving: a disk too full for them still takes records.
        var zeroedEnd = header.count
        if let preallocator, preallocator.tuning.initialZeros > 0 {
            let zeros = header.count..<(header.count + preallocator.tuning.initialZeros)
            do throws(StorageError) {
                try FileSystem.writeZeros(descriptor, zeros, path: path)
                zeroedEnd = zeros.upperBound
            } catch {
                logger.warning("could not prepare zero-filled log space: \(error.message). The log goes on; its syncs cost more")
                try FileSystem.truncate(descriptor, to: header.count, path: path)
            }
        }
        try FileSystem.syncData(descriptor, path: path)
        try FileSystem.syncDirectory(directory)
        preallocator?.adopt(descriptor: descriptor, path: path, recordsEnd: header.count, zeroedEnd: zeroedEnd)
    }

    /// Makes the segment durable and closes it, cutting off the zeros after its records first.
    private func closeSegment() throws(StorageError) {
        guard let segment else { return }
        // A segment is complete once a newer one exists: make it durable whatever the policy (the cut
        // syncs too). Cut whenever zeros were prepared, also by a step that failed half-way.
        if let preallocator {
            preallocator.release()
            try FileSystem.truncate(segment.descriptor, to: segment.end, path: segment.path)
        } else {
            try FileSystem.syncData(segment.descriptor, path: segment.path)
        }
        closeDescriptor(segment.descriptor)
        self.segment = nil
    }

    private func writeToSegment(_ bytes: ArraySlice<UInt8>) throws(StorageError) {
        guard !bytes.isEmpty, let current = segment else { return }
        let end = current.end + bytes.count
        preallocator?.reserve(through: end)
        let result: Result<Void, StorageError> = bytes.withUnsafeBytes { raw in
            Result { () throws(StorageError) in
                try FileSystem.writeAll(current.descriptor, raw, at: current.end, path: current.path)
            }
        }
        try result.get()
        segment?.end = end
    }

    private func syncSegment() throws(StorageError) {
        guard let segment else { return }
        try FileSystem.syncData(segment.descriptor, path: segment.path)
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
