import Dispatch
import EntitledCore
import EntitledStorage
import EntitledWire
import NIOCore

/// A single server's writes: each is decided and applied to the store at once, on its connection's loop
/// (no thread hop), and recorded by the log; its answer and its watchers' notice wait until the log has
/// it (synced, with `--fsync always`), which each loop asks for once per turn (group commit). Without a
/// data directory (`durable == nil`, tests) a change is committed as soon as it is applied.
final class LogWriteBackend: WriteBackend {
    let store: EntitlementStore
    /// The data directory, when the store is kept in one.
    let durable: DurableStore?
    let publication: Publication

    init(store: EntitlementStore, durable: DurableStore?, publication: Publication) {
        self.store = store
        self.durable = durable
        self.publication = publication
    }

    func submit(_ write: WriteRequest, into output: inout ByteBuffer, pending: inout ByteBuffer, delivery: WriteDelivery) -> WriteSubmission {
        let applied: AppliedWrite
        do throws(StoreError) {
            applied = try store.perform(write.write, announcing: publication.wantsNotices)
        } catch {
            // Refused, or the log takes no writes (`unavailable`): either way nothing changed.
            return .answered(error: RequestProcessor.writeAnswer(to: write, .failure(.refused(error)), now: store.now(), into: &output))
        }
        // The store moved on: reads waiting for its change (`minSeq`) may go.
        if applied.changed { publication.sequenceWaiters.advanced(to: applied.sequence) }
        guard let log = durable?.log, applied.sequence > log.acknowledgedSequence else {
            RequestProcessor.writeAnswer(to: write, .success(applied), now: store.now(), into: &output)
            if let notice = applied.notice { publication.watchHub.publish(notice) }
            return .answered(error: nil)
        }
        RequestProcessor.writeAnswer(to: write, .success(applied), now: store.now(), into: &pending)
        return .afterCommit(sequence: applied.sequence, notice: applied.notice)
    }

    /// Asks that every change through `sequence` be committed (a loop's `GroupCommit`, at the end of its
    /// turn). Returns the outcome when it is known at once; otherwise `nil`, and calls `completion` (on
    /// the log's writer thread) when it is. `onThisThread`: the caller may block until the commit is made
    /// (a loop serving one writer) rather than hand it to the writer thread.
    func commit(
        through sequence: UInt64, onThisThread: Bool,
        completion: @escaping @Sendable (Result<Void, WriteFailure>) -> Void
    ) -> Result<Void, WriteFailure>? {
        guard let log = durable?.log else { return .success(()) }
        // On the loop's thread: no thread hop and back in a lone client's round trip. Otherwise, when the
        // commit syncs, the writer thread does it while the loop serves on: the connections not in this
        // group send their next requests meanwhile, and a loop blocked in `fdatasync` (about 100 µs here)
        // would leave them all waiting. Measured at 50 connections of durable grants (release, 2 cores,
        // 4 runs each): 72,000 against 62,000 writes a second (median), at 15 against 13.5 µs of CPU per
        // write (the two wake-ups per group and the smaller groups). A commit that only writes to the OS
        // (`everysec`, `no`) is over sooner than the two wake-ups would take, so the loop makes it itself.
        // (The callbacks are made where they are needed: a closure is an allocation, and the commit on the
        // loop's thread, a lone writer's every write, needs none.)
        if onThisThread || log.policy != .always {
            if let result = log.commitIfIdle(through: sequence) { return result.mapError { Self.failure($0, of: log) } }
            // Another thread is writing the log (counted as handed off), or memory is being put back.
            log.whenAcknowledged(sequence) { result in completion(result.mapError { Self.failure($0, of: log) }) }
            return nil
        }
        let known = log.commitOnWriterThread(through: sequence) { result in completion(result.mapError { Self.failure($0, of: log) }) }
        return known?.mapError { Self.failure($0, of: log) }
    }

    /// A failed commit, with how far `log` had kept the changes when it failed: a group's commit may fail
    /// after the writer thread's timer already synced its first writes, which were made and stay (memory
    /// is put back to them before the failure is reported, so the log's acknowledged change is final).
    private static func failure(_ error: JournalError, of log: LogWriter) -> WriteFailure {
        var failure = WriteFailure(.journal(error))
        failure.madeThrough = log.acknowledgedSequence
        return failure
    }

    /// Publishes `notice` once change `notice.sequence` is committed (a closed connection's writes: their
    /// writer is gone, their watchers are still told).
    func publishWhenCommitted(_ notice: AccessNotice) {
        guard let log = durable?.log else {
            publication.watchHub.publish(notice)
            return
        }
        let watchHub = publication.watchHub
        log.whenAcknowledged(notice.sequence) { result in
            if case .success = result { watchHub.publish(notice) }
        }
    }

    func snapshot(id: ByteBuffer?, completion: @escaping @Sendable (ByteBuffer, ErrorCode?) -> Void) -> Bool {
        guard let durable else { return false }
        RequestProcessor.answerOffTheLoop(id: id, completion: completion) {
            do throws(StorageError) {
                return .success(.snapshot(try durable.snapshot().summary))
            } catch {
                // A log that takes no writes is the disk's state, not a server fault: the same code as writes get.
                let code: ErrorCode = if case .writesUnavailable = error { .unavailable } else { .internal }
                return .failure(WireError(code, "the snapshot failed: \(error.message)"))
            }
        }
        return true
    }

    var status: WriteBackendStatus {
        guard let durable else { return .inMemory }
        return .dataDirectory(durable.persistenceStatus)
    }

    /// How far the log has got, for reads that wait for it (`nil`: no data directory).
    var logProgress: LogProgress? { durable?.log.progress }

    /// The loops that serve connections started (`nil`: they stopped): the log resumes after a failure
    /// only once each has committed the turn it is in (`ServingLoop.waitForCommittedTurns`).
    func serving(_ loops: [ServingLoop]?) {
        guard let log = durable?.log else { return }
        guard let loops else {
            // The loops are gone: nothing to wait for, and the log no longer keeps them alive.
            log.setResumeBarrier(nil)
            return
        }
        log.setResumeBarrier { ServingLoop.waitForCommittedTurns(of: loops) }
    }
}
