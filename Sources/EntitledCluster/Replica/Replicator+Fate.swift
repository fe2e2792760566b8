import EntitledCore
import Logging
import PostgresNIO

extension Replicator {
    /// Learns, for certain, what became of each group whose COMMIT went unanswered, and tells its writers
    /// when that is "not committed" (or unknowable). A group that committed is carried out when catching
    /// up reaches its rows (`apply`), which answers its writers with exactly what they made.
    ///
    /// The old connection's server process is ended first and must be gone: until then the transaction
    /// could still commit (its COMMIT may be on its way through a stalled network or a pooler), so no
    /// look from this connection settles anything. Once it is gone, PostgreSQL's record of the
    /// transaction (`pg_xact_status`) can no longer change. A group still unsettled when its writers' time
    /// is up is answered `outcome_unknown` by the sweeper (`PostgresReplicatedLog`).
    func settleUnresolved() async throws {
        guard let tables, !unresolved.isEmpty else { return }
        var remaining: [UnresolvedGroup] = []
        for group in unresolved {
            if group.backend != backend {
                guard try await tables.end(group.backend, waitingUpTo: 1000) else {
                    logger.warning(
                        "the server process of a connection lost during a COMMIT is still running; its group's fate stays unknown until it ends",
                        metadata: ["pid": "\(group.backend.pid)", "firstChange": "\(group.decided.first)"]
                    )
                    remaining.append(group)
                    continue
                }
            }
            switch try await tables.status(ofTransaction: group.transaction) {
            case .committed:
                if store.sequence >= group.decided.last {
                    // Its rows went with a snapshot the replica was reloaded from: it holds the changes.
                    answerFromReplica(group.decided)
                } else {
                    remaining.append(group)  // catching up reaches its rows
                }
            case .aborted:
                logger.notice("a group of writes whose COMMIT went unanswered had not committed", metadata: ["firstChange": "\(group.decided.first)"])
                fail(group.decided, .notMade, reason: "the change was not committed (\(group.reason)); nothing was changed")
            case .inProgress:
                remaining.append(group)
            case .forgotten:
                fail(group.decided, .unknown, reason: "the database lost the COMMIT's answer (\(group.reason)) and no longer knows the transaction")
            }
        }
        unresolved = remaining
    }

    /// Answers a committed group's writers from the replica as it is now (its rows were not seen: a
    /// snapshot covered them).
    private func answerFromReplica(_ group: DecidedGroup) {
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
    func finishUnresolved(reason: String) {
        for group in unresolved { fail(group.decided, .unknown, reason: reason) }
        unresolved = []
    }
}
