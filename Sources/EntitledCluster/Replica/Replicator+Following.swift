import EntitledCore
import EntitledStorage
import Logging
import PostgresNIO

extension Replicator {
    /// How many changes one statement fetches.
    static let fetchLimit = 2000

    /// Applies what the other nodes committed since the replica's newest change (up to `through`, or
    /// everything), each change confirmed durable by the database first (`read_changes`).
    func catchUp(through: UInt64 = .max) async throws {
        guard let tables else { return }
        state.withLockedValue { $0.catchUps += 1 }
        while store.sequence < through {
            let batch = try await tables.readChanges(after: store.sequence, limit: Self.fetchLimit, node: options.nodeName)
            noteContact(head: batch.head)
            guard !batch.rows.isEmpty else {
                try await compare(head: batch.head, group: batch.headGroup)
                return
            }
            try await apply(batch.rows, upTo: batch.head)
        }
    }

    /// With nothing after the replica's newest change to read, the database's newest must be the replica's:
    /// below it, or another change at its number, the database lost what the replica applied; above it,
    /// the changes between were removed by a snapshot while the node was away.
    private func compare(head: UInt64, group: Int64) async throws {
        let applied = store.sequence
        if head < applied {
            try await recoverFromDivergence("the database's newest change is \(head), this replica applied change \(applied)")
        } else if head == applied, group != anchor {
            try await recoverFromDivergence("the database's change \(head) is not the change \(head) this replica applied")
        } else if head > applied {
            try await reloadRemovedChanges(head: head)
        }
    }

    /// How a row read from the database stands to the replica's newest change.
    enum Succession: Equatable {
        /// It comes right after it: numbered next (or a mark resuming after it), and naming its group.
        case follows
        /// The database's history is not the replica's: `evidence` says how.
        case diverges(evidence: String)
        /// Changes between were removed by a snapshot.
        case gap
    }

    func succession(of row: ChangeRow) throws(ClusterError) -> Succession {
        guard let previous = row.follows else {
            throw .corrupt("the mark at change \(row.sequence) does not say which change it follows: the schema was changed by hand")
        }
        let applied = store.sequence
        if previous == applied {
            guard row.previousGroup == anchor else {
                return .diverges(evidence: "the database's change \(row.sequence) does not follow the change \(applied) this replica applied")
            }
            return .follows
        }
        if previous < applied {
            return .diverges(evidence: "the database's history resumes at \(row.sequence) after change \(previous), and this replica applied change \(applied)")
        }
        return .gap
    }

    /// Applies committed `rows` (the changes after the replica's newest, in order, as far as `head`) and
    /// tells the observer. Each must follow the one before (`succession(of:)`): where one does not, what
    /// came before it is applied and announced, and then the replica recovers (a divergence) or is loaded
    /// again from the newest snapshot (a gap).
    func apply(_ rows: [ChangeRow], upTo head: UInt64) async throws {
        guard let tables else { return }
        let observer = state.withLockedValue { $0.observer }
        let announcing = observer?.wantsNotices ?? false
        var notices: [AccessNotice] = []
        var ownGroups: [CarriedOutGroup] = []
        var replicated: UInt64 = 0
        var marks: UInt64 = 0
        var interruption: Succession?
        var index = rows.startIndex
        while index < rows.endIndex {
            let row = rows[index]
            let succession = try succession(of: row)
            guard succession == .follows else {
                interruption = succession
                break
            }
            if row.isMark {
                try store.skipNumbers(through: row.sequence)
                anchor = row.group
                marks += 1
                logger.notice(
                    "the database's history resumes at change \(row.sequence + 1) after change \(row.follows ?? 0) (a mark after a failover)",
                    metadata: ["mark": "\(row.sequence)"]
                )
                index += 1
                continue
            }
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
            anchor = row.group
            replicated += 1
            index += 1
        }
        clock.raiseFloor(to: store.newestChangeTime)
        state.withLockedValue {
            $0.changesReplicated += replicated
            $0.historyMarks += marks
        }
        if index > rows.startIndex { observer?.replicaApplied(through: store.sequence, notices: notices) }
        for group in ownGroups { group.answer() }
        switch interruption {
        case nil, .follows?:
            return
        case .diverges(let evidence)?:
            try await recoverFromDivergence(evidence)
        case .gap?:
            // A database that holds less than the replica lost what it applied, whatever else it shows.
            guard head >= store.sequence else {
                try await recoverFromDivergence("the database's newest change is \(head), this replica applied change \(store.sequence)")
                return
            }
            try await reloadRemovedChanges(head: head)
        }
    }

    /// The changes after the replica's newest were removed by a snapshot while the node was away: the
    /// replica is loaded again from the newest snapshot.
    private func reloadRemovedChanges(head: UInt64) async throws {
        guard let tables else { return }
        logger.notice(
            "changes this replica needs were removed by a snapshot; loading the newest snapshot",
            metadata: ["applied": "\(store.sequence)", "head": "\(head)"]
        )
        try await reloadReplica(tables: tables)
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
    /// Watchers hear nothing of what was skipped; reads waiting for a change are released, and reads
    /// withheld after a divergence are served again.
    func reloadReplica(tables: ClusterTables) async throws {
        let loaded = try await PostgresReplicatedLog.load(
            tables: tables, clock: { [clock] in clock.now() }, confirmingAs: options.nodeName, feedRetention: options.feedRetention,
            logger: logger
        )
        store.restore(from: loaded.store)
        anchor = loaded.anchor
        clock.raiseFloor(to: store.newestChangeTime)
        let (observer, withheld) = state.withLockedValue { state in
            defer { state.withholdingReads = false }
            state.snapshotSequence = loaded.snapshotSequence
            state.knownSequence = max(state.knownSequence, loaded.store.sequence)
            state.lastContact = .now
            state.reloads += 1
            state.historyMarks += loaded.marks
            return (state.observer, state.withholdingReads)
        }
        observer?.replicaApplied(through: store.sequence, notices: [])
        if withheld { observer?.replicaWithholdsReads(nil) }
        // Groups whose changes the snapshot covers: their rows are gone, their fate is asked of PostgreSQL.
    }
}

/// A replica read from the database: the store, the snapshot it started from, how many changes and marks
/// were applied after it, and the group of its newest change.
struct LoadedReplica {
    var store: EntitlementStore
    var snapshotSequence: UInt64
    var replayed: Int
    var marks: UInt64
    var anchor: Int64
}

extension PostgresReplicatedLog {
    /// Reads the newest snapshot and every change after it into a new store, checking that each continues
    /// the one before and that the snapshot claims no more than the database holds. Reads again when the
    /// database changed meanwhile (a snapshot removed changes it was about to read). With `node`, waits
    /// until what it read is durable under the database's settings (`confirmDurable`) before returning it:
    /// a node serves it.
    static func load(
        tables: ClusterTables, clock: @escaping @Sendable () -> Timestamp, confirmingAs node: String?,
        feedRetention: FeedRetention = .standard, logger: Logger
    ) async throws -> LoadedReplica {
        // A snapshot of a large store takes longer to read than one write may wait.
        var tables = tables
        tables.timeout = max(tables.timeout, .seconds(300))
        var attempts = 0
        while true {
            attempts += 1
            var image = StoreImage(sequence: 0, memberships: MembershipTable(), catalog: [:])
            var anchor: Int64 = 0
            if let snapshot = try await tables.newestSnapshot() {
                do {
                    image = try PortableRecords.decodeSnapshot(snapshot.bytes, name: "\(tables.schema).snapshots row \(snapshot.sequence)")
                } catch {
                    throw ClusterError.corrupt(error.message)
                }
                guard image.sequence == snapshot.sequence else {
                    throw ClusterError.corrupt("\(tables.schema).snapshots row \(snapshot.sequence) holds the state after change \(image.sequence)")
                }
                anchor = snapshot.group
            }
            let store = EntitlementStore(restoring: image, clock: clock, journal: RefusingJournal(), feedRetention: feedRetention)
            var replayed = 0
            var marks: UInt64 = 0
            var problem: String?
            reading: while true {
                let batch = try await tables.changes(after: store.sequence, limit: Replicator.fetchLimit)
                guard !batch.rows.isEmpty else {
                    if batch.head > store.sequence {
                        problem = "changes after \(store.sequence) are missing"
                    } else if batch.head < store.sequence {
                        problem = "the newest snapshot is of change \(store.sequence) and the database's newest change is \(batch.head)"
                    } else if batch.headGroup != anchor {
                        problem = "the database's change \(batch.head) is not the one the newest snapshot holds"
                    }
                    break reading
                }
                for row in batch.rows {
                    guard let previous = row.follows, previous == store.sequence, row.previousGroup == anchor else {
                        problem = "change \(row.sequence) does not follow change \(store.sequence)"
                        break reading
                    }
                    if row.isMark {
                        try store.skipNumbers(through: row.sequence)
                        marks += 1
                    } else {
                        let (sequence, change, context) = try Replicator.decode(row, schema: tables.schema)
                        do {
                            try store.replay(change, context: context, sequence: sequence)
                        } catch {
                            throw ClusterError.corrupt("change \(sequence) in \(tables.schema).changes does not fit the state before it: \(error.message)")
                        }
                    }
                    anchor = row.group
                    replayed += 1
                }
            }
            guard let problem else {
                if let node { try await tables.confirmDurable(node: node) }
                return LoadedReplica(store: store, snapshotSequence: image.sequence, replayed: replayed, marks: marks, anchor: anchor)
            }
            guard attempts < 5 else {
                throw ClusterError.corrupt(
                    "the database's history cannot be read (\(problem)): a snapshot in \(tables.schema).snapshots claims more than \(tables.schema).changes holds, or the tables were changed by hand; see Protocol/CLUSTER.md, \"After a failover\""
                )
            }
            logger.debug("the database changed while it was read; reading again", metadata: ["problem": "\(problem)"])
        }
    }
}
