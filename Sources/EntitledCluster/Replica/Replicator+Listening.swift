import PostgresNIO

/// A busy node stops listening for the other nodes' commits, and listens again once its writes stop.
///
/// Every commit notifies every listening node: PostgreSQL signals each listener's server process, which
/// sends a notification that wakes the node. A node that commits groups back to back needs none of it:
/// each of its commits brings the changes the others committed since its last (`commit_group`'s
/// missing changes). Measured with 45 connections over 3 nodes on 2 cores: the notifications cost about
/// a tenth of the machine (PostgreSQL's signals and the nodes' wake-ups), 21,700 against 24,800 writes a
/// second without them (medians of 5 runs).
///
/// A quiet node's wait for work is capped at `followDelay`; when it found no writes, it listens again
/// and then catches up, so nothing committed after that catch-up goes unannounced, and nothing before it
/// unread: an idle node is as fresh as before, and a busy one is as fresh as its own next commit.
extension Replicator {
    /// Groups committed back to back before the node stops listening: a node that only now and then
    /// has two writes in a row keeps listening (each change of mode costs a round trip).
    static let quietAfterGroups = 16

    /// Called after each group: stops listening once the node has been busy for `quietAfterGroups`.
    func quietIfBusy() async throws {
        busyStreak += 1
        guard listening, busyStreak >= Self.quietAfterGroups, let tables else { return }
        try await tables.run(#"UNLISTEN "\#(tables.channel)""#)
        setListening(false)
    }

    /// Called when the node has no writes, before it catches up: listens again. The LISTEN takes effect
    /// before the catch-up's statement reads, so every commit is either read by it or announced after it.
    func listenWhenIdle() async throws {
        busyStreak = 0
        guard !listening, let tables else { return }
        try await tables.run(#"LISTEN "\#(tables.channel)""#)
        setListening(true)
    }

    /// Notes whether the node listens, for the replicator and for `stats`.
    func setListening(_ listening: Bool) {
        self.listening = listening
        state.withLockedValue { $0.listening = listening }
    }
}
