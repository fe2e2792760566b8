import EntitledCore
import EntitledStorage
import Logging
import PostgresNIO

extension Replicator {
    /// Commits the writes waiting in the queue as one group: takes the cluster's lock and catches the
    /// replica up in one round trip, decides the writes against that newest committed state (as many as
    /// are independent of each other: `GroupFootprint`), appends their changes and commits. Only then are
    /// the changes applied to the replica, watchers told and writers answered: nobody is ever served a
    /// change that was not committed.
    ///
    /// What a failure tells the writers is what is certain: before COMMIT was sent, the transaction
    /// cannot commit (`unavailable`, nothing changed); after, its fate is learned for certain (`+Fate`)
    /// before anyone is told it failed.
    func commitGroup() async throws {
        guard var tables, let backend else { return }
        let groupID = Int64.random(in: 1...Int64.max)
        // The group may take no longer than its oldest write may wait.
        let deadline = state.withLockedValue { $0.queue.first?.deadline } ?? (.now + options.writeTimeout)
        func bounded() -> ClusterTables {
            tables.timeout = max(.milliseconds(100), deadline - .now)
            return tables
        }
        try await bounded().begin()
        let locked = try await bounded().lockHead(after: store.sequence, limit: Self.fetchLimit)
        noteContact(head: locked.head)
        if store.sequence < locked.head {
            try await apply(locked.rows, upTo: locked.head)
            while store.sequence < locked.head {
                let (_, rows) = try await bounded().changes(after: store.sequence, limit: Self.fetchLimit)
                try await apply(rows, upTo: locked.head)
            }
        }
        guard store.sequence == locked.head else {
            throw ClusterError.corrupt("the replica holds change \(store.sequence) but the database's newest is \(locked.head)")
        }
        let members = decideGroup()
        guard !members.isEmpty else {
            // Nothing to change (replays, claims of nothing): nothing to commit.
            try await bounded().rollback()
            return
        }
        let decided = DecidedGroup(members: members, first: locked.head + 1, id: groupID)
        var records: [(sequence: UInt64, record: [UInt8])] = []
        records.reserveCapacity(members.count)
        for (offset, member) in members.enumerated() {
            let sequence = decided.first + UInt64(offset)
            records.append((sequence, PortableRecords.encodeChange(member.decision.change!, context: member.decision.context, sequence: sequence)))
        }
        do {
            try await bounded().append(records, node: options.nodeName, group: groupID)
        } catch {
            // COMMIT was never sent: the transaction cannot commit, and nothing reached the replica.
            let reason = describe(error)
            noteFailedGroup(reason: reason)
            for member in members {
                member.write.complete(.failure(WriteFailure(.notMade, reason: "the database failed before the group of writes committed (\(reason))")))
            }
            throw error
        }
        do {
            try await bounded().commit()
        } catch {
            let reason = describe(error)
            noteFailedGroup(reason: reason)
            logger.error(
                "the COMMIT of a group of writes went unanswered; finding out whether it committed",
                metadata: ["writes": "\(members.count)", "firstChange": "\(decided.first)", "reason": "\(reason)"]
            )
            unresolved.append(UnresolvedGroup(decided: decided, transaction: locked.transaction, backend: backend, reason: reason))
            state.withLockedValue { $0.undecidedFates += members.map(\.write) }
            throw error
        }
        let observer = state.withLockedValue { $0.observer }
        let carried = try carryOut(decided, announcing: observer?.wantsNotices ?? false)
        observer?.replicaApplied(through: store.sequence, notices: carried.notices)
        carried.answer()
    }

    /// Takes writes from the front of the queue and decides each against the replica, while they are
    /// independent of the ones taken before (the rest stay queued, in order, for the next group). Those
    /// that change nothing, or that the store refuses, are answered at once: they read committed state
    /// only. Returns the writes that make a change, in order, with their decisions.
    private func decideGroup() -> [(write: PendingWrite, decision: WriteDecision)] {
        let taken = state.withLockedValue { state -> [PendingWrite] in
            let count = min(state.queue.count, options.maximumGroupSize)
            defer { state.queue.removeFirst(count) }
            return Array(state.queue.prefix(count))
        }
        var footprint = GroupFootprint()
        var members: [(write: PendingWrite, decision: WriteDecision)] = []
        var decidedCount = 0
        for write in taken {
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
        return members
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
        let answered = Set(group.members.map { ObjectIdentifier($0.write) })
        state.withLockedValue { state in
            state.groupsCommitted += 1
            state.writesCommitted += UInt64(group.members.count)
            state.knownSequence = max(state.knownSequence, group.last)
            state.lastContact = .now
            if !state.undecidedFates.isEmpty { state.undecidedFates.removeAll { answered.contains(ObjectIdentifier($0)) } }
        }
        return carried
    }

    /// Tells every writer of `group` it failed, with `outcome`.
    func fail(_ group: DecidedGroup, _ outcome: WriteFailure.Outcome, reason: String) {
        let failed = Set(group.members.map { ObjectIdentifier($0.write) })
        state.withLockedValue { $0.undecidedFates.removeAll { failed.contains(ObjectIdentifier($0)) } }
        for member in group.members { member.write.complete(.failure(WriteFailure(outcome, reason: reason))) }
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
