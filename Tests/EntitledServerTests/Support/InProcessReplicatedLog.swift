import Dispatch
import EntitledCore
import Foundation
import NIOConcurrencyHelpers

/// A `ReplicatedLog` in the test process, for testing a cluster node's server without a database: it
/// decides each write on one serial queue (a group of one), "commits" it after `commitDelay` and only then
/// applies it to the store and tells the observer, or fails it on demand (nothing applied), and applies
/// changes "another node" made through `store.replay`, as the real replicator does. Everything it does to
/// the store happens on its queue, in order.
final class InProcessReplicatedLog: ReplicatedLog, @unchecked Sendable {
    let store: EntitlementStore
    private let queue = DispatchQueue(label: "in-process-replicated-log")
    private let commitDelay: Duration
    // Guarded by `state`.
    private struct State {
        var failuresToCome = 0
        var observer: (any ReplicaObserver)?
        var groupsCommitted: UInt64 = 0
        var groupsFailed: UInt64 = 0
        var changesReplicated: UInt64 = 0
        var snapshots = 0
    }
    private let state = NIOLockedValueBox(State())

    init(store: EntitlementStore, commitDelay: Duration = .milliseconds(20)) {
        self.store = store
        self.commitDelay = commitDelay
    }

    /// Tells the observer to withhold reads (`reason`) or serve them again (`nil`), as a replica that found
    /// the database's history is not the one it applied does while it reloads.
    func withholdReads(_ reason: String?) {
        state.withLockedValue { $0.observer }?.replicaWithholdsReads(reason)
    }

    /// The next `count` groups fail (their changes undone) with a reason that says so.
    func failNextGroups(_ count: Int) {
        state.withLockedValue { $0.failuresToCome += count }
    }

    func submit(_ write: StoreWrite, completion: @escaping @Sendable (Result<AppliedWrite, WriteFailure>) -> Void) {
        queue.async { [self] in
            var random = BufferedRandomNumberGenerator()
            let decision = store.decide(write, using: &random)
            if let refusal = decision.refusal {
                completion(.failure(.refused(refusal)))
                return
            }
            guard decision.change != nil else {
                completion(.success(store.unchangedResult(of: decision)))  // changed nothing: nothing to commit
                return
            }
            // The round trip to the database: nothing else is decided meanwhile (its lock is held).
            Thread.sleep(forTimeInterval: Double(commitDelay.components.attoseconds) / 1e18 + Double(commitDelay.components.seconds))
            let (fails, observer) = state.withLockedValue { state -> (Bool, (any ReplicaObserver)?) in
                guard state.failuresToCome > 0 else {
                    state.groupsCommitted += 1
                    return (false, state.observer)
                }
                state.failuresToCome -= 1
                state.groupsFailed += 1
                return (true, state.observer)
            }
            if fails {
                completion(.failure(WriteFailure(.notCommitted(cause: "the in-process test log failed this group on purpose"))))
                return
            }
            do {
                let applied = try store.carryOut(decision, sequence: store.sequence + 1, announcing: observer?.wantsNotices ?? false)
                observer?.replicaApplied(through: applied.sequence, notices: applied.notice.map { [$0] } ?? [])
                completion(.success(applied))
            } catch {
                // This log's store is its system of record: a change it could not carry out was not made.
                completion(.failure(WriteFailure(.notCommitted(cause: "\(error)"))))
            }
        }
    }

    func setObserver(_ observer: any ReplicaObserver) {
        state.withLockedValue { $0.observer = observer }
    }

    func snapshot() throws(JournalError) -> SnapshotSummary {
        let sequence = store.sequence
        let count = state.withLockedValue { state -> Int in
            state.snapshots += 1
            return state.snapshots
        }
        return SnapshotSummary(location: "test:snapshots/\(count)", sequence: sequence, bytes: 123, memberships: store.membershipCount, milliseconds: 4)
    }

    var replicationStatus: ReplicationStatus {
        let state = state.withLockedValue { $0 }
        let applied = store.sequence
        return ReplicationStatus(
            source: "test://in-process", node: "node-a", connected: true, writable: true, appliedSequence: applied,
            knownSequence: applied + 2, secondsSinceContact: 0.25, snapshotSequence: 0, groupsCommitted: state.groupsCommitted,
            writesCommitted: state.groupsCommitted, groupsFailed: state.groupsFailed, reconnects: 1,
            changesReplicated: state.changesReplicated, lastError: nil
        )
    }

    /// Makes changes as another node of the cluster would: `write` runs against a copy of this node's
    /// replica, and the changes it made are then applied to the replica (`store.replay`) and told to the
    /// observer, on the log's queue. Returns once they are applied, with the last one's number.
    @discardableResult
    func asAnotherNode(_ write: @escaping @Sendable (EntitlementStore) throws -> Void) throws -> UInt64 {
        try queue.sync { () throws -> UInt64 in
            let recorder = ChangeRecorder()
            let other = EntitlementStore(restoring: store.image(), journal: recorder)
            try write(other)
            let changes = recorder.changes.withLockedValue { $0 }
            let observer = state.withLockedValue { state in
                state.changesReplicated += UInt64(changes.count)
                return state.observer
            }
            var notices: [AccessNotice] = []
            for change in changes {
                if let notice = try store.replay(change.change, context: change.context, sequence: change.sequence, announcing: observer?.wantsNotices ?? false) {
                    notices.append(notice)
                }
            }
            observer?.replicaApplied(through: store.sequence, notices: notices)
            return store.sequence
        }
    }
}

/// Keeps the changes a store records, as another node's log would.
private final class ChangeRecorder: ChangeJournal {
    let changes = NIOLockedValueBox<[(sequence: UInt64, change: StoreChange, context: ChangeContext)]>([])

    func record(_ change: StoreChange, context: ChangeContext, sequence: UInt64) throws(JournalError) {
        changes.withLockedValue { $0.append((sequence, change, context)) }
    }
}
