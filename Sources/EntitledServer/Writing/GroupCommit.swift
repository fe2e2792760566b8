import EntitledCore

/// One loop's group commit on a single server: the connections whose write answers wait for the log
/// (`WriteSubmission.afterCommit`), committed together once at the end of the loop's turn, like Redis's
/// `beforeSleep`. The loop tells it who waits (`add`), asks it once a turn (`endOfTurn`), and asks how
/// long it may sleep (`isDue`, `heldUntil`); when, where and how often the log is asked is decided here.
///
/// Loop thread only: a commit the log's writer thread makes comes back as a task posted to the loop,
/// which is the only place the writer thread's callback touches it (hence unchecked `Sendable`).
final class GroupCommit: @unchecked Sendable {
    /// Where a commit is asked for, and what it may wait for.
    private enum Phase {
        /// The next turn with writes waiting commits them.
        case ready
        /// A commit is out with the log's writer thread (asked for at `askedAt`, monotonic ns) and not
        /// answered yet: the connections that read writes meanwhile wait, then go in one commit. One at a
        /// time, because each costs two thread wake-ups (there and back): handed over every turn, under
        /// load they cost more than the syncs they saved (measured at 50 connections: 10,000 a second,
        /// 3 µs more CPU per write).
        case outstanding(askedAt: UInt64)
        /// A handed-off commit of many connections came back: the next waits until they are back, for a
        /// while (`CommitHold`).
        case held(CommitHold)
    }

    private let log: LogWriteBackend
    private let longestHoldNanoseconds: UInt64
    private var phase = Phase.ready
    /// The connections with writes waiting for the next commit.
    private var waiting: [ServedConnection] = []
    /// `waiting`'s spare buffer, swapped in while committing: copying the array and then emptying it would
    /// allocate a new buffer every turn (measured: one malloc per round trip).
    private var committing: [ServedConnection] = []
    /// How many connections this loop's commits have waited for lately: a moving average over its turns
    /// that committed, which tells a lone writer (about 1) from many (see `endOfTurn`).
    private var recentWaitingConnections = 1.0

    init(log: LogWriteBackend, longestHoldNanoseconds: UInt64) {
        self.log = log
        self.longestHoldNanoseconds = longestHoldNanoseconds
    }

    /// `connection` read writes whose answers wait for the log.
    func add(_ connection: ServedConnection) {
        waiting.append(connection)
    }

    /// Whether connections have writes waiting for a commit (the loop asks before `endOfTurn`: a turn
    /// without writes then costs one comparison).
    var hasWaiting: Bool { !waiting.isEmpty }

    /// Whether writes wait and nothing holds them back: the loop commits them without sleeping first.
    var isDue: Bool {
        guard !waiting.isEmpty, case .ready = phase else { return false }
        return true
    }

    /// When a held commit is asked for even if not everyone is back (monotonic ns), while writes wait for
    /// it: the loop sleeps no longer.
    var heldUntil: UInt64? {
        guard case .held(let hold) = phase, !waiting.isEmpty else { return nil }
        return hold.deadline
    }

    /// Commits once for every write read this turn (and those that waited for a commit still out). If
    /// the commit is handed to the log's writer thread (several writers, or another loop writing the log
    /// at that moment), the answers are released when it calls back on `loop` (group commit either way).
    /// `mustCommit`: no hold may delay it (a barrier waits for this turn's commit, or the loop is stopping).
    func endOfTurn(on loop: ServingLoop, mustCommit: Bool) {
        guard !waiting.isEmpty else { return }
        switch phase {
        case .outstanding:
            return
        case .held(let hold):
            // Not held while a barrier waits for this turn's commit (`waitForCommittedTurns`: the log
            // resumes after a failure only once every loop asked about the writes it numbered), nor while
            // stopping.
            guard mustCommit || hold.isOver(waiting: waiting.count, now: monotonicNanoseconds()) else { return }
            phase = .ready
        case .ready:
            break
        }
        // Swapped with a spare, as the loop's flush list is: copying the array and then emptying it allocated.
        swap(&waiting, &committing)
        defer { committing.removeAll(keepingCapacity: true) }
        var newest: UInt64?
        for connection in committing {
            if let sequence = connection.answers.uncommittedSequence { newest = max(newest ?? 0, sequence) }
        }
        guard let through = newest else { return }
        // Writes read from now on wait for the next commit: none may join a run this one settles.
        for connection in committing { connection.answers.closeRun() }
        // A lone writer's commit is made on this thread (no hop to another and back in its round trip);
        // with several writing, the loop hands it over and serves on, since the connections not in this
        // group would otherwise wait out the sync. An average rather than this turn's count: under load,
        // turns of one write come between large ones, and syncing those here stalled the loop (measured
        // at 50 connections: more, smaller groups and a third more CPU per write).
        recentWaitingConnections += (Double(committing.count) - recentWaitingConnections) / 8
        let onThisThread = recentWaitingConnections < 1.5
        let askedAt = onThisThread ? 0 : monotonicNanoseconds()
        let group = UncheckedConnections(committing)  // a copy: the callback may come later
        let settled = log.commit(through: through, onThisThread: onThisThread) { [self] result in
            loop.execute { self.cameBack(group.connections, through: through, result: result) }
        }
        if let settled {
            for connection in committing { connection.committed(through: through, result: settled) }
        } else {
            // Asked on this thread but another thread is writing the log: timed from now.
            phase = .outstanding(askedAt: onThisThread ? monotonicNanoseconds() : askedAt)
        }
    }

    /// A commit that was out came back (on the loop's thread): its connections' answers go, and the next
    /// commit may wait for them to send their next writes.
    private func cameBack(_ group: [ServedConnection], through: UInt64, result: Result<Void, WriteFailure>) {
        let askedAt = if case .outstanding(let askedAt) = phase { askedAt } else { UInt64(0) }
        phase = .ready
        if case .success = result,
            let hold = CommitHold.after(
                committed: group.count, waiting: waiting.count, askedAt: askedAt, now: monotonicNanoseconds(),
                longest: longestHoldNanoseconds
            )
        {
            phase = .held(hold)
        }
        for connection in group { connection.committed(through: through, result: result) }
    }

    /// Publishes `notice` once its change is committed: the write of a connection closed while its answer
    /// waited (its writer is gone, its watchers are still told).
    func publishWhenCommitted(_ notice: AccessNotice) {
        log.publishWhenCommitted(notice)
    }
}

/// Connections handed to another thread and back to their own loop: only ever touched on that loop.
private struct UncheckedConnections: @unchecked Sendable {
    let connections: [ServedConnection]
    init(_ connections: [ServedConnection]) { self.connections = connections }
}
