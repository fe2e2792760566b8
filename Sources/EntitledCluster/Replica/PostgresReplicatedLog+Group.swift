import EntitledCore
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

extension PostgresReplicatedLog {
    /// Where a group stood when it failed: what its writers may be told.
    private enum Phase {
        /// Nothing decided: the writes changed nothing, anywhere.
        case undecided
        /// Decided and in memory, the transaction not yet at COMMIT: not committed.
        case decided(first: UInt64)
        /// COMMIT sent: committed or not, the answer was lost.
        case committing(first: UInt64)
    }

    /// Commits `writes` as one group: lock the head, catch up, decide, insert, commit.
    func commitGroup(_ writes: [PendingWrite], tables: ClusterTables) async throws {
        let groupID = Int64.random(in: 1...Int64.max)
        let timedOut = NIOLockedValueBox(false)
        let timeout = options.writeTimeout
        // A connection that stops answering (a network cut without a reset) would hold the group for
        // minutes: past the write deadline it is closed, which fails the query in flight.
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            timedOut.withLockedValue { $0 = true }
            try? await tables.connection.close()
        }
        defer { watchdog.cancel() }
        var phase = Phase.undecided
        do {
            try await tables.begin()
            let head = try await tables.head(locking: true)
            noteContact(head: head)
            try await applyCommitted(upTo: head, tables: tables)
            guard store.sequence == head else {
                throw ClusterError.corrupt("the replica holds change \(store.sequence) but the database's newest is \(head)")
            }
            collector.open()
            for write in writes { write.decide() }
            let records = collector.close()
            guard let first = records.first?.sequence, let last = records.last?.sequence else {
                // Nothing changed (repeated claims, replayed grants): nothing to commit.
                try await tables.rollback()
                for write in writes { write.complete(nil) }
                return
            }
            phase = .decided(first: first)
            try await tables.append(records, node: options.nodeName, group: groupID)
            phase = .committing(first: first)
            try await tables.commit()
            watchdog.cancel()
            state.withLockedValue { state in
                state.groupsCommitted += 1
                state.writesCommitted += UInt64(writes.count)
                state.knownSequence = max(state.knownSequence, last)
                state.lastContact = .now
            }
            for write in writes { write.complete(nil) }
        } catch {
            _ = collector.close()
            let reason = timedOut.withLockedValue { $0 } ? "the database did not answer within \(Self.seconds(timeout)) s" : "\(DatabaseFailure(error))"
            // A failed group ends this connection (the error goes up to the work loop, which reconnects):
            // `stats` says so before any writer is answered, so a client told `unavailable` never reads
            // `"connected":true` after it.
            state.withLockedValue {
                $0.groupsFailed += 1
                $0.connected = false
                $0.lastError = reason
            }
            switch phase {
            case .undecided:
                try? await tables.rollback()
                for write in writes { write.complete(JournalError(reason: "the database failed before the write was decided (\(reason)); nothing was changed")) }
            case .decided(let first), .committing(let first):
                let mayHaveCommitted = if case .committing = phase { true } else { false }
                logger.error(
                    "a group of writes failed; finding out whether it committed",
                    metadata: ["writes": "\(writes.count)", "firstChange": "\(first)", "reason": "\(reason)", "commitSent": "\(mayHaveCommitted)"]
                )
                state.withLockedValue {
                    $0.unresolved = UnresolvedGroup(writes: writes, firstSequence: first, group: groupID, mayHaveCommitted: mayHaveCommitted, reason: reason)
                }
            }
            throw error
        }
    }

    /// Learns whether a failed group committed (its writers are told so), and puts the replica back to
    /// what the database holds if it did not.
    func resolve(_ unresolved: UnresolvedGroup, tables: ClusterTables) async throws {
        var committed = false
        if unresolved.mayHaveCommitted {
            committed = try await tables.group(of: unresolved.firstSequence) == unresolved.group
        }
        if committed {
            logger.notice("the failed group of writes had committed", metadata: ["firstChange": "\(unresolved.firstSequence)"])
            state.withLockedValue { state in
                state.groupsCommitted += 1
                state.writesCommitted += UInt64(unresolved.writes.count)
            }
            for write in unresolved.writes { write.complete(nil) }
        } else {
            try await reloadReplica(tables: tables)
            logger.notice("the failed group of writes had not committed; the replica is back to the database's state", metadata: ["sequence": "\(store.sequence)"])
            for write in unresolved.writes {
                write.complete(JournalError(reason: "the change was not committed (\(unresolved.reason)) and is undone; nothing was changed"))
            }
        }
        state.withLockedValue { $0.unresolved = nil }
    }

    func noteContact(head: UInt64) {
        state.withLockedValue { state in
            state.knownSequence = max(state.knownSequence, head)
            state.lastContact = .now
        }
    }
}
