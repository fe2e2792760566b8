import EntitledCore
import EntitledStorage
import NIOCore

/// Commits the log once per event loop turn for every connection of that loop, like Redis's
/// `beforeSleep`: connections that read a write during the turn ask to be committed, and one task
/// scheduled behind the turn's I/O writes (and with `--fsync always` syncs) the log once for all of them,
/// then releases their answers, with no thread hop. If the other loop is writing the log at that moment,
/// this loop does not wait for it: the log's writer thread writes the rest right after, and the answers
/// are released when it calls back (group commit either way).
///
/// Used only on its event loop.
final class LoopCommitter: @unchecked Sendable {
    private let eventLoop: any EventLoop
    private let log: LogWriter
    private var waiting: [RequestHandler] = []
    private var isScheduled = false

    init(eventLoop: any EventLoop, log: LogWriter) {
        self.eventLoop = eventLoop
        self.log = log
    }

    /// Commits `handler`'s writes at the end of this loop turn.
    func enqueue(_ handler: RequestHandler) {
        eventLoop.preconditionInEventLoop()
        waiting.append(handler)
        guard !isScheduled else { return }
        isScheduled = true
        eventLoop.execute { self.commit() }
    }

    private func commit() {
        isScheduled = false
        let handlers = waiting
        waiting.removeAll(keepingCapacity: true)
        guard let through = handlers.compactMap(\.uncommittedSequence).max() else { return }
        if let result = log.commitIfIdle(through: through) {
            release(handlers, through: through, result: result)
            return
        }
        // Another loop is writing the log right now: rather than block this loop until it is done, let
        // the log's writer thread write the rest right after it and come back here.
        let eventLoop = self.eventLoop
        let waiting = NIOLoopBound(handlers, eventLoop: eventLoop)
        log.whenAcknowledged(through) { result in
            eventLoop.execute { self.release(waiting.value, through: through, result: result) }
        }
    }

    private func release(_ handlers: [RequestHandler], through: UInt64, result: Result<Void, JournalError>) {
        for handler in handlers {
            handler.committed(through: through, result: result)
        }
    }
}
