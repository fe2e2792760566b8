import EntitledCore
import EntitledStorage
import Logging
import PostgresNIO

extension PostgresReplicatedLog {
    /// How many changes one query fetches.
    static let fetchLimit = 2000

    /// Applies what other nodes committed since the replica's last change, and announces it.
    func catchUp(_ tables: ClusterTables) async throws {
        let head = try await tables.head()
        noteContact(head: head)
        try await applyCommitted(upTo: head, tables: tables)
    }

    /// Applies the committed changes up to `head`. When some are gone (a snapshot covered and removed
    /// them while this node was away), the replica is loaded again from the newest snapshot.
    func applyCommitted(upTo head: UInt64, tables: ClusterTables) async throws {
        while store.sequence < head {
            let batch = try await tables.changes(after: store.sequence, limit: Self.fetchLimit)
            guard let first = batch.first, first.sequence == store.sequence + 1 else {
                logger.notice(
                    "changes this replica needs were removed by a snapshot; loading the newest snapshot",
                    metadata: ["applied": "\(store.sequence)", "head": "\(head)"]
                )
                try await reloadReplica(tables: tables)
                return
            }
            var applied: [ReplicatedChange] = []
            applied.reserveCapacity(batch.count)
            for row in batch {
                let (sequence, change, context) = try Self.decode(row, schema: tables.schema)
                do {
                    try store.replay(change, context: context, sequence: sequence)
                } catch {
                    throw ClusterError.corrupt("change \(sequence) in \(tables.schema).changes does not fit the replica: \(error.message)")
                }
                applied.append(ReplicatedChange(sequence: sequence, change: change, context: context))
            }
            state.withLockedValue { $0.changesReplicated += UInt64(applied.count) }
            announce(applied)
        }
    }

    static func decode(_ row: (sequence: UInt64, format: UInt32, record: [UInt8]), schema: String) throws(ClusterError) -> (UInt64, StoreChange, ChangeContext) {
        let decoded: (sequence: UInt64, change: StoreChange, context: ChangeContext)
        do {
            decoded = try PortableRecords.decodeChange(row.record, version: row.format, name: "\(schema).changes row \(row.sequence)")
        } catch {
            throw .corrupt(error.message)
        }
        guard decoded.sequence == row.sequence else {
            throw .corrupt("\(schema).changes row \(row.sequence) holds change \(decoded.sequence)")
        }
        return (decoded.sequence, decoded.change, decoded.context)
    }

    /// Puts the replica back to exactly what the database holds: the newest snapshot and the changes after it.
    func reloadReplica(tables: ClusterTables) async throws {
        let loaded = try await Self.load(tables: tables, clock: { [store] in store.now() }, journal: nil, logger: logger)
        store.restore(from: loaded.store)
        state.withLockedValue { state in
            state.snapshotSequence = loaded.snapshotSequence
            state.knownSequence = max(state.knownSequence, loaded.store.sequence)
            state.lastContact = .now
        }
    }

    /// Reads the newest snapshot and every change after it into a new store. Retries when a snapshot
    /// written meanwhile removed changes it was about to read.
    static func load(
        tables: ClusterTables, clock: @escaping @Sendable () -> Timestamp, journal: (any ChangeJournal)?, logger: Logger
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
            let store = EntitlementStore(restoring: image, clock: clock, journal: journal)
            var replayed = 0
            var gap = false
            while true {
                let batch = try await tables.changes(after: store.sequence, limit: fetchLimit)
                if batch.isEmpty { break }
                if batch[0].sequence != store.sequence + 1 {
                    gap = true
                    break
                }
                for row in batch {
                    let (sequence, change, context) = try decode(row, schema: tables.schema)
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
