import EntitledCore
import EntitledStorage
import Logging
import PostgresNIO

extension Replicator {
    /// Commits the writes waiting in the queue as one group, in one round trip: decides them against the
    /// replica (as many as are independent of each other: `GroupFootprint`), and hands their changes to
    /// `commit_group`, which commits them unless a change committed since the replica's newest touched
    /// what they looked at (then they are decided again on the newer state). Only once committed are the
    /// changes applied to the replica, after the other nodes' changes before them, watchers told and
    /// writers answered: nobody is ever served a change that was not committed.
    ///
    /// A call that fails may have committed (its answer comes after its COMMIT): the group's fate is
    /// learned for certain (`+Fate`) before anyone is told it failed.
    func commitGroup() async throws {
        guard var tables, let backend else { return }
        // A connection known to be closed sends nothing: the writes stay queued, and are refused (never made)
        // when the loop notes the loss.
        guard !tables.connection.isClosed else { throw DatabaseFailure(timeout: "the connection to the database is closed") }
        // The group may take no longer than its oldest write may wait.
        let deadline = state.withLockedValue { $0.queue.first?.deadline } ?? (.now + options.writeTimeout)
        tables.timeout = max(.milliseconds(100), deadline - .now)
        let expected = store.sequence
        let (members, footprint) = decideGroup()
        guard !members.isEmpty else { return }
        var group = DecidedGroup(members: members, first: 0, id: Int64.random(in: 1...Int64.max))
        // The records without their first 8 bytes (the change number, little-endian), which the database
        // writes once it numbers them.
        let records = members.map { Array(PortableRecords.encodeChange($0.decision.change!, context: $0.decision.context, sequence: 0).dropFirst(8)) }
        // Whatever holds the group up from here, its writers are answered by their deadline (the sweeper).
        state.withLockedValue { $0.inFlight = members.map(\.write) }
        let answer: GroupCommit
        do {
            answer = try await tables.commitGroup(
                expected: expected, expectedGroup: anchor, records: records, footprint: footprint, node: options.nodeName, group: group.id,
                limit: Self.fetchLimit
            )
        } catch {
            let reason = describe(error)
            noteFailedGroup(reason: reason)
            logger.error(
                "the commit of a group of writes went unanswered; finding out whether it committed",
                metadata: ["writes": "\(members.count)", "group": "\(group.id)", "reason": "\(reason)"]
            )
            unresolved.append(UnresolvedGroup(decided: group, backend: backend, reason: reason))
            state.withLockedValue { state in
                state.undecidedFates += members.map(\.write)
                state.inFlight = []
            }
            throw error
        }
        switch answer.outcome {
        case .diverged:
            // Not committed, and decided on a history the database does not hold: decided again once the
            // replica is what the database holds.
            noteContact(head: answer.first - 1)
            requeue(members)
            try await recoverFromDivergence(
                "the database refused a group decided on change \(expected): its history does not continue this replica's (its newest change is \(answer.first - 1))"
            )
            return
        case .conflict:
            noteContact(head: answer.first - 1)
            // A change committed meanwhile touched what these writes looked at: the newer changes first, then
            // the writes are decided again.
            if !answer.missing.isEmpty { try await apply(answer.missing, upTo: answer.first - 1) }
            requeue(members)
            state.withLockedValue { $0.groupsRedecided += 1 }
            return
        case .committed:
            break
        }
        group.first = answer.first
        noteContact(head: group.last)
        // The changes other nodes committed since come first.
        if !answer.missing.isEmpty { try await apply(answer.missing, upTo: group.first - 1) }
        if store.sequence + 1 < group.first { try await catchUp(through: group.first - 1) }
        guard store.sequence + 1 == group.first else {
            // Committed, but the replica cannot take it in place (it was loaded again meanwhile): loaded once
            // more, it holds the group, and the writers are answered from it.
            logger.warning(
                "a committed group of writes does not follow the replica's newest change; loading the replica again",
                metadata: ["applied": "\(store.sequence)", "firstChange": "\(group.first)"]
            )
            try await reloadReplica(tables: tables)
            state.withLockedValue { $0.inFlight = [] }
            if store.sequence >= group.last {
                answerFromReplica(group)
            } else {
                fail(group, because: .committedChangesGone(first: group.first, last: group.last))
            }
            return
        }
        lastGroupSize = members.count
        lastCommitAt = .now
        let observer = state.withLockedValue { $0.observer }
        let carried = try carryOut(group, announcing: observer?.wantsNotices ?? false)
        observer?.replicaApplied(through: store.sequence, notices: carried.notices)
        carried.answer()
    }

    /// Puts the writes of a group that was not committed back at the front of the queue, to be decided
    /// again (those whose deadline passed meanwhile were answered by the sweeper and are skipped then).
    private func requeue(_ members: [(write: PendingWrite, decision: WriteDecision)]) {
        state.withLockedValue { state in
            state.queue.insert(contentsOf: members.map(\.write), at: 0)
            state.inFlight = []
        }
    }

    /// Takes writes from the front of the queue and decides each against the replica, while they are
    /// independent of the ones taken before (the rest stay queued, in order, for the next group). Those
    /// that change nothing, or that the store refuses, are answered at once: they read committed state
    /// only. Returns the writes that make a change, in order, with their decisions, and the footprint of
    /// all the writes taken (those answered at once included: they too were decided on this state).
    private func decideGroup() -> (members: [(write: PendingWrite, decision: WriteDecision)], footprint: GroupFootprint) {
        let taken = state.withLockedValue { state -> [PendingWrite] in
            let count = min(state.queue.count, options.maximumGroupSize)
            defer { state.queue.removeFirst(count) }
            return Array(state.queue.prefix(count))
        }
        var footprint = GroupFootprint()
        var members: [(write: PendingWrite, decision: WriteDecision)] = []
        var decidedCount = 0
        for write in taken {
            // Answered already: its deadline passed while its group was refused and it waited again.
            guard !write.isAnswered else {
                decidedCount += 1
                continue
            }
            let decision = store.decide(write.write, using: &random)
            guard footprint.admit(decision.footprint) else { break }
            decidedCount += 1
            if let refusal = decision.refusal {
                write.complete(.failure(.refused(refusal)))
            } else if decision.change == nil {
                write.complete(.success(store.unchangedResult(of: decision)))
            } else {
                members.append((write, decision))
            }
        }
        if decidedCount < taken.count {
            let rest = taken[decidedCount...]
            state.withLockedValue { $0.queue.insert(contentsOf: rest, at: 0) }
        }
        return (members, footprint)
    }

    /// Applies a committed group's decided changes to the replica, in order. The caller tells the
    /// observer of them (`notices`), then answers the writers (`answer()`), so that a writer who reads
    /// right after its answer finds its change applied and its watchers told.
    func carryOut(_ group: DecidedGroup, announcing: Bool) throws -> CarriedOutGroup {
        var carried = CarriedOutGroup()
        carried.answers.reserveCapacity(group.members.count)
        for (offset, member) in group.members.enumerated() {
            let sequence = group.first + UInt64(offset)
            do {
                let applied = try store.carryOut(member.decision, sequence: sequence, announcing: announcing)
                if let notice = applied.notice { carried.notices.append(notice) }
                carried.answers.append((member.write, .success(applied)))
            } catch {
                throw ClusterError.corrupt("this node's own change \(sequence) does not fit its replica: \(error.message)")
            }
        }
        anchor = group.id
        clock.raiseFloor(to: store.newestChangeTime)
        let answered = Set(group.members.map { ObjectIdentifier($0.write) })
        state.withLockedValue { state in
            state.inFlight = []
            state.groupsCommitted += 1
            state.writesCommitted += UInt64(group.members.count)
            state.knownSequence = max(state.knownSequence, group.last)
            state.lastContact = .now
            if !state.undecidedFates.isEmpty { state.undecidedFates.removeAll { answered.contains(ObjectIdentifier($0)) } }
        }
        return carried
    }

    /// Tells every writer of `group` it failed, because of `cause`.
    func fail(_ group: DecidedGroup, because cause: WriteFailure.Cause) {
        let failed = Set(group.members.map { ObjectIdentifier($0.write) })
        state.withLockedValue { $0.undecidedFates.removeAll { failed.contains(ObjectIdentifier($0)) } }
        for member in group.members { member.write.complete(.failure(WriteFailure(cause))) }
    }

    /// A group failed: the connection goes with it (the caller rethrows and the loop reconnects), and
    /// `stats` says so before any writer is answered, so a client told `unavailable` never reads
    /// `"connected":true` after it.
    private func noteFailedGroup(reason: String) {
        state.withLockedValue {
            $0.groupsFailed += 1
            $0.connected = false
            $0.lastError = reason
        }
    }

    func describe(_ error: any Error) -> String {
        "\(DatabaseFailure(error))"
    }
}

/// A committed group applied to the replica: what its watchers are told, and its writers' answers.
struct CarriedOutGroup {
    var notices: [AccessNotice] = []
    var answers: [(write: PendingWrite, result: Result<AppliedWrite, WriteFailure>)] = []

    /// Tells each writer.
    func answer() {
        for (write, result) in answers { write.complete(result) }
    }
}
