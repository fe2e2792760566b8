import EntitledCore
import Logging

/// What the log does when its disk fails or fills: it stops acknowledging, cuts the segment back to the
/// acknowledged changes, has memory put back to them, answers the failed writers, and tries to resume
/// (a full disk) or stays down until a restart (any other failure). STORAGE.md, "When the disk is full".
extension LogWriter {
    // MARK: Failures

    /// A write or sync failed (caller holds `ioLock`): refuse changes from now on, drop what was not
    /// written, cut the segments back to the acknowledged records, and leave the rest (memory, the
    /// waiters, retrying) to the writer thread, which `rollbackPending` wakes.
    func fail(_ error: StorageError) {
        var failure = LogOutage(error, since: Timestamp.now())
        condition.lock()
        if let earlier = outage { failure = earlier }  // a retry that failed: the same outage goes on
        outage = failure
        rollbackPending = true
        pending.removeAll()
        pendingRecords = 0
        rotations.removeAll()
        pendingLastSequence = acknowledged
        counters.outages += 1
        condition.broadcast()
        condition.unlock()
        logger.critical(
            "the log cannot be written: \(failure.cause). Changes not yet on disk are undone and refused; reads go on",
            metadata: ["kind": "\(failure.kind.rawValue)", "resumesByItself": "\(failure.resumesByItself)"]
        )
        cutBackToAcknowledged()
    }

    /// Makes the segments hold exactly the acknowledged records again (caller holds `ioLock`): the current
    /// segment is closed, newer segments are removed, the one holding the last acknowledged record is cut
    /// after it. A restart must not replay a change its writer was told failed.
    func cutBackToAcknowledged() {
        if let current = segment {
            preallocator?.release()
            closeDescriptor(current.descriptor)
            segment = nil
        }
        guard let end = acknowledgedEnd else { return }
        do throws(StorageError) {
            for name in try FileSystem.listDirectory(directory) {
                guard let first = LogFormat.firstSequence(ofSegmentNamed: name), first > end.firstSequence else { continue }
                try FileSystem.remove(directory + "/" + name)
            }
            if FileSystem.fileSize(end.path) != nil {  // (a snapshot may have removed it as covered)
                try FileSystem.truncate(end.path, to: end.end)
            }
            try FileSystem.syncDirectory(directory)
        } catch {
            logger.critical("could not cut the log back to the acknowledged changes: \(error.message). A restart may replay changes that were answered failed")
            condition.lock()
            cutFailed = true
            if outage?.kind == .diskFull { outage?.kind = .diskFailed }  // the disk's state is unknown now
            condition.unlock()
        }
    }

    /// On the writer thread after a failure: memory is put back to what the log holds, then every change
    /// after it is answered failed, and a full disk is tried again after the first delay.
    func rollBack() {
        condition.lock()
        let handler = rollbackHandler
        let through = acknowledged
        condition.unlock()
        handler?(through)
        condition.lock()
        // Memory is back at the acknowledged changes: nothing after them exists any more.
        progress.noteRecorded(acknowledged)
        rollbackPending = false
        let failed = waiters
        waiters.removeAll()
        let failure: JournalError = outage.map { .outage(cause: $0.reason, changeMayRemain: cutFailed) } ?? .failed
        retryDelay = Self.firstRetryDelay
        nextRetry = ContinuousClock.now + retryDelay
        condition.broadcast()
        condition.unlock()
        for waiter in failed { waiter.callback(.failure(failure)) }
    }

    /// On the writer thread, a full disk: opens a new segment after the acknowledged records (a create,
    /// a header, zeros, syncs). If the disk takes it, writes resume once the resume barrier has run;
    /// otherwise the next try comes after twice the wait, up to `longestRetryDelay`.
    func tryToResume() {
        ioLock.lock()
        condition.lock()
        let next = acknowledged + 1
        outage?.retries += 1
        condition.unlock()
        var opened = false
        do throws(StorageError) {
            try openSegment(firstSequence: next)
            opened = true
        } catch {
            abandonSegment(firstSequence: next)
            let retried = LogOutage(error, since: Timestamp.now())
            if retried.kind == .diskFailed {
                // A sync that failed while trying: the disk is not just full.
                condition.lock()
                outage?.kind = .diskFailed
                outage?.cause = retried.cause
                outage?.errorName = retried.errorName
                condition.unlock()
                logger.critical("the log's disk failed while writes were tried again: \(retried.cause). Writes stay refused until a restart")
            }
        }
        if opened { acknowledgedEnd = segment.map { ($0.firstSequence, $0.path, $0.end) } }
        ioLock.unlock()
        guard opened else {
            condition.lock()
            retryDelay = min(retryDelay * 2, Self.longestRetryDelay)
            nextRetry = ContinuousClock.now + retryDelay
            condition.unlock()
            return
        }
        condition.lock()
        let barrier = resumeBarrier
        condition.unlock()
        guard barrier?() ?? true else {
            ioLock.lock()
            abandonSegment(firstSequence: next)
            ioLock.unlock()
            condition.lock()
            nextRetry = ContinuousClock.now + retryDelay
            condition.unlock()
            logger.warning("the disk takes writes again, but an event loop did not finish its turn in time; writes resume at the next try")
            return
        }
        condition.lock()
        let ended = outage
        outage = nil
        currentSegmentFirstSequence = next
        counters.resumes += 1
        condition.broadcast()
        condition.unlock()
        if let ended {
            logger.notice(
                "the log takes writes again",
                metadata: ["since": "\(ended.since.rfc3339)", "retries": "\(ended.retries)"]
            )
        }
    }

    /// Closes and removes the segment a try to resume opened (caller holds `ioLock`): it holds no record.
    func abandonSegment(firstSequence: UInt64) {
        if let current = segment {
            preallocator?.release()
            closeDescriptor(current.descriptor)
            segment = nil
        }
        try? FileSystem.remove(directory + "/" + LogFormat.segmentName(firstSequence: firstSequence))
    }
}
