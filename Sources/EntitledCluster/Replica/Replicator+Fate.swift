import EntitledCore
import Logging
import PostgresNIO

extension Replicator {
    /// Learns, for certain, what became of each group whose commit went unanswered, and tells its writers
    /// when that is "not committed". A group that committed is carried out when catching up reaches its
    /// rows (`apply`), which answers its writers with exactly what they made.
    ///
    /// The old connection's server process is ended first and must be gone: until then the call could
    /// still commit (its request may be on its way through a stalled network or a pooler), so no look from
    /// this connection settles anything. Once it is gone, whether the group's row exists can no longer
    /// change. A group still unsettled when its writers' time is up is answered `outcome_unknown` by the
    /// sweeper (`PostgresReplicatedLog`).
    func settleUnresolved() async throws {
        guard let tables, !unresolved.isEmpty else { return }
        var remaining: [UnresolvedGroup] = []
        for group in unresolved {
            if group.backend != backend {
                guard try await tables.end(group.backend, waitingUpTo: 1000) else {
                    logger.warning(
                        "the server process of a connection lost during a commit is still running; its group's fate stays unknown until it ends",
                        metadata: ["pid": "\(group.backend.pid)", "group": "\(group.decided.id)"]
                    )
                    remaining.append(group)
                    continue
                }
            }
            guard let first = try await tables.firstChange(ofGroup: group.decided.id) else {
                logger.notice("a group of writes whose commit went unanswered had not committed", metadata: ["group": "\(group.decided.id)"])
                fail(group.decided, because: .notCommitted(cause: group.reason))
                continue
            }
            var decided = group.decided
            decided.first = first
            if store.sequence >= decided.last {
                // Its rows went with a snapshot the replica was reloaded from: it holds the changes.
                answerFromReplica(decided)
            } else {
                remaining.append(group)  // catching up reaches its rows and carries it out
            }
        }
        unresolved = remaining
    }

    /// Answers a committed group's writers from the replica as it is now (its rows were not seen: a
    /// snapshot covered them).
    func answerFromReplica(_ group: DecidedGroup) {
        let answered = Set(group.members.map { ObjectIdentifier($0.write) })
        state.withLockedValue { $0.undecidedFates.removeAll { answered.contains(ObjectIdentifier($0)) } }
        for (offset, member) in group.members.enumerated() {
            var applied = store.unchangedResult(of: member.decision)
            applied.sequence = group.first + UInt64(offset)
            applied.changed = true
            member.write.complete(.success(applied))
        }
    }

    /// The node stops: groups still unsettled are answered `outcome_unknown`.
    func finishUnresolved() {
        for group in unresolved { fail(group.decided, because: .stoppedBeforeFateKnown) }
        unresolved = []
    }
}
