import EntitledCore
import EntitledStorage
import Logging
import PostgresNIO

extension Replicator {
    /// How many changes one statement fetches.
    static let fetchLimit = 2000

    /// Applies what the other nodes committed since the replica's newest change (up to `through`, or
    /// everything).
    func catchUp(through: UInt64 = .max) async throws {
        guard let tables else { return }
        state.withLockedValue { $0.catchUps += 1 }
        while store.sequence < through {
            let (head, rows) = try await tables.changes(after: store.sequence, limit: Self.fetchLimit)
            noteContact(head: head)
            guard store.sequence < head else { return }
            try await apply(rows, upTo: head)
        }
    }

    /// Applies committed `rows` (the changes after the replica's newest, in order, as far as `head`) and
    /// tells the observer. When they do not start right after the replica's newest, the changes it needs
    /// were removed by a snapshot while it was away: the replica is loaded again from the newest snapshot.
    func apply(_ rows: [ChangeRow], upTo head: UInt64) async throws {
        guard let tables else { return }
        guard let first = rows.first, first.sequence == store.sequence + 1 else {
            guard store.sequence < head else { return }
            logger.notice(
                "changes this replica needs were removed by a snapshot; loading the newest snapshot",
                metadata: ["applied": "\(store.sequence)", "head": "\(head)"]
            )
            try await reloadReplica(tables: tables)
            return
        }
        let observer = state.withLockedValue { $0.observer }
        let announcing = observer?.wantsNotices ?? false
        var notices: [AccessNotice] = []
        var ownGroups: [CarriedOutGroup] = []
        var replicated: UInt64 = 0
        var index = rows.startIndex
        while index < rows.endIndex {
            let row = rows[index]
            // This node's own group, whose commit went unanswered: its rows say it committed.
            if !unresolved.isEmpty, let position = unresolved.firstIndex(where: { $0.decided.id == row.group }) {
                var group = unresolved.remove(at: position).decided
                group.first = row.sequence
                // Its decisions are exactly the changes it committed: carried out, they answer its writers.
                let carried = try carryOut(group, announcing: announcing)
                notices += carried.notices
                ownGroups.append(carried)
                logger.notice("a group of writes whose commit went unanswered had committed", metadata: ["firstChange": "\(row.sequence)"])
                while index < rows.endIndex, rows[index].sequence <= group.last { index += 1 }
                continue
            }
            let (sequence, change, context) = try Self.decode(row, schema: tables.schema)
            do {
                if let notice = try store.replay(change, context: context, sequence: sequence, announcing: announcing) { notices.append(notice) }
            } catch {
                throw ClusterError.corrupt("change \(sequence) in \(tables.schema).changes does not fit the replica: \(error.message)")
            }
            replicated += 1
            index += 1
        }
        state.withLockedValue { $0.changesReplicated += replicated }
        observer?.replicaApplied(through: store.sequence, notices: notices)
        for group in ownGroups { group.answer() }
    }

    /// A row's change. Its record is a log record's payload without the leading change number, which is
    /// the row's own (Protocol/CLUSTER.md).
    static func decode(_ row: ChangeRow, schema: String) throws(ClusterError) -> (UInt64, StoreChange, ChangeContext) {
        let decoded: (sequence: UInt64, change: StoreChange, context: ChangeContext)
        // A newer node wrote it (an operation this release does not have): say so, rather than call the
        // record an unknown kind.
        guard row.format <= PortableRecords.changeFormatVersion else {
            throw .corrupt(
                "\(schema).changes row \(row.sequence) is in record format \(row.format), made by a newer entitled; this node reads formats 1 to \(PortableRecords.changeFormatVersion): upgrade entitled on this node"
            )
        }
        var payload = [UInt8]()
        payload.reserveCapacity(8 + row.record.count)
        withUnsafeBytes(of: row.sequence.littleEndian) { payload.append(contentsOf: $0) }
        payload.append(contentsOf: row.record)
        do {
            decoded = try PortableRecords.decodeChange(payload, version: row.format, name: "\(schema).changes row \(row.sequence)")
        } catch {
            throw .corrupt(error.message)
        }
        guard decoded.sequence == row.sequence else {
            throw .corrupt("\(schema).changes row \(row.sequence) holds change \(decoded.sequence)")
        }
        return (decoded.sequence, decoded.change, decoded.context)
    }

    /// Puts the replica to exactly what the database holds: the newest snapshot and the changes after it.
    /// Watchers hear nothing of what was skipped; reads waiting for a change are released.
    func reloadReplica(tables: ClusterTables) async throws {
        let loaded = try await PostgresReplicatedLog.load(tables: tables, clock: { [store] in store.now() }, logger: logger)
        store.restore(from: loaded.store)
        state.withLockedValue { state in
            state.snapshotSequence = loaded.snapshotSequence
            state.knownSequence = max(state.knownSequence, loaded.store.sequence)
            state.lastContact = .now
        }
        state.withLockedValue { $0.observer }?.replicaApplied(through: store.sequence, notices: [])
        // Groups whose changes the snapshot covers: their rows are gone, their fate is asked of PostgreSQL.
    }
}

extension PostgresReplicatedLog {
    /// Reads the newest snapshot and every change after it into a new store. Retries when a snapshot
    /// written meanwhile removed changes it was about to read.
    static func load(
        tables: ClusterTables, clock: @escaping @Sendable () -> Timestamp, logger: Logger
    ) async throws -> (store: EntitlementStore, snapshotSequence: UInt64, replayed: Int) {
        // A snapshot of a large store takes longer to read than one write may wait.
        var tables = tables
        tables.timeout = max(tables.timeout, .seconds(300))
        var attempts = 0
        while true {
            attempts += 1
            var image = StoreImage(sequence: 0, memberships: MembershipTable(), catalog: [:])
            if let snapshot = try await tables.newestSnapshot() {
                do {
                    image = try PortableRecords.decodeSnapshot(snapshot.bytes, name: "\(tables.schema).snapshots row \(snapshot.sequence)")
                } catch {
                    throw ClusterError.corrupt(error.message)
                }
                guard image.sequence == snapshot.sequence else {
                    throw ClusterError.corrupt("\(tables.schema).snapshots row \(snapshot.sequence) holds the state after change \(image.sequence)")
                }
            }
            let store = EntitlementStore(restoring: image, clock: clock, journal: RefusingJournal())
            var replayed = 0
            var gap = false
            while true {
                let (head, batch) = try await tables.changes(after: store.sequence, limit: Replicator.fetchLimit)
                if batch.isEmpty {
                    gap = store.sequence < head
                    break
                }
                if batch[0].sequence != store.sequence + 1 {
                    gap = true
                    break
                }
                for row in batch {
                    let (sequence, change, context) = try Replicator.decode(row, schema: tables.schema)
                    do {
                        try store.replay(change, context: context, sequence: sequence)
                    } catch {
                        throw ClusterError.corrupt("change \(sequence) in \(tables.schema).changes does not fit the state before it: \(error.message)")
                    }
                }
                replayed += batch.count
            }
            if !gap { return (store, image.sequence, replayed) }
            guard attempts < 5 else {
                throw ClusterError.corrupt("\(tables.schema).changes misses changes after the newest snapshot (\(image.sequence)); the database was changed by hand")
            }
            logger.debug("a snapshot removed changes while they were read; reading again")
        }
    }
}
