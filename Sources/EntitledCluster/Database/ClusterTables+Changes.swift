import EntitledCore
import EntitledStorage
import NIOCore
import PostgresNIO

/// The change table: what a group of writes locks, reads and appends, and what a follower reads.
extension ClusterTables {
    /// Commits a group in one round trip (`commit_group`, a procedure of the schema, which commits before
    /// it answers): under the cluster's lock, unless the database's history does not continue the replica's
    /// newest change (`expected`, of group `expectedGroup`: `.diverged`) or a change committed after it
    /// touched the group's `keys` (or either must be alone: `.conflict`), its records are numbered from the
    /// newest change on, stored, the head moved and the commit announced. Also returns the changes committed
    /// after `expected` (up to `limit`), which the node applies before its own.
    ///
    /// Called outside any transaction: a procedure may commit only there. Its answer comes after its
    /// COMMIT, so `.committed` is certain; a failure of the call leaves the outcome unknown.
    func commitGroup(
        expected: UInt64, expectedGroup: Int64, records: [[UInt8]], footprint: GroupFootprint, node: String, group: Int64, limit: Int
    ) async throws -> GroupCommit {
        var bindings = PostgresBindings(capacity: 10)
        bindings.append(Int64(expected))
        bindings.append(expectedGroup)
        bindings.append(node)
        bindings.append(group)
        bindings.append(Array(footprint.keys))
        bindings.append(footprint.isExclusive)
        bindings.append(Int32(PortableFormatVersion.change))
        bindings.append(records.map { ByteBuffer(bytes: $0) })
        bindings.append(channel)
        bindings.append(Int32(limit))
        let result = try await query(
            PostgresQuery(unsafeSQL: "CALL \(schema).commit_group($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)", binds: bindings), "the group's commit"
        )
        for row in result.rows {
            // The newest change's group (the procedure's `newest_group`) is not needed: the missing changes name theirs.
            let (outcome, first, _, seqs, formats, groups, prevs, bodies) = try row.decode(
                (String, Int64, Int64, [Int64]?, [Int32]?, [Int64]?, [Int64]?, [ByteBuffer]?).self
            )
            let missing = Self.changeRows(seqs: seqs, formats: formats, groups: groups, prevs: prevs, bodies: bodies)
            let kind: GroupCommit.Outcome
            switch outcome {
            case "committed": kind = .committed
            case "conflict": kind = .conflict
            case "diverged": kind = .diverged
            default: throw ClusterError.corrupt("\(schema).commit_group answered \(outcome): the schema was changed by hand")
            }
            return GroupCommit(outcome: kind, first: UInt64(first), missing: missing)
        }
        throw ClusterError.corrupt("\(schema).commit_group answered nothing: the schema was changed by hand")
    }

    /// The newest change and up to `limit` changes after `sequence`, in order, in one round trip, confirmed
    /// durable under the database's settings (`read_changes`): what a node applies as it follows.
    func readChanges(after sequence: UInt64, limit: Int, node: String) async throws -> ChangeBatch {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(Int64(sequence))
        bindings.append(Int32(limit))
        bindings.append(node)
        let result = try await query(
            PostgresQuery(unsafeSQL: "CALL \(schema).read_changes($1, $2, $3)", binds: bindings), "the changes after \(sequence)"
        )
        for row in result.rows {
            let (newest, newestGroup, seqs, formats, groups, prevs, bodies) = try row.decode(
                (Int64, Int64, [Int64]?, [Int32]?, [Int64]?, [Int64]?, [ByteBuffer]?).self
            )
            let rows = Self.changeRows(seqs: seqs, formats: formats, groups: groups, prevs: prevs, bodies: bodies)
            return ChangeBatch(head: UInt64(newest), headGroup: newestGroup, rows: rows)
        }
        throw ClusterError.corrupt("\(schema).read_changes answered nothing: the schema was changed by hand")
    }

    /// As `readChanges`, in one statement that may run inside a transaction (a consistent read of the whole
    /// store), without the durability confirmation: `confirmDurable` gives it once the read is done.
    func changes(after sequence: UInt64, limit: Int) async throws -> ChangeBatch {
        let result = try await query(
            """
            SELECT h.seq, h.group_id, c.seq, c.format, c.group_id, c.prev_group, c.record FROM \(unescaped: schema).head h
            LEFT JOIN LATERAL (
                SELECT seq, format, group_id, prev_group, record FROM \(unescaped: schema).changes
                WHERE seq > \(Int64(sequence)) ORDER BY seq LIMIT \(Int32(limit))) c ON true
            ORDER BY c.seq
            """,
            "changes"
        )
        var head: (UInt64, Int64)?
        var rows: [ChangeRow] = []
        for row in result.rows {
            let (newest, newestGroup, seq, format, group, previous, record) = try row.decode((Int64, Int64, Int64?, Int32?, Int64?, Int64?, ByteBuffer?).self)
            head = (UInt64(newest), newestGroup)
            if let seq, let format, let group, let previous, let record {
                rows.append(
                    ChangeRow(sequence: UInt64(seq), format: UInt32(format), group: group, previousGroup: previous, record: Array(record.readableBytesView))
                )
            }
        }
        guard let head else { throw ClusterError.corrupt("\(schema).head holds no row: the schema was changed by hand") }
        return ChangeBatch(head: head.0, headGroup: head.1, rows: rows)
    }

    /// Waits until what this session saw is durable under the database's settings: with a synchronous
    /// standby, a commit of this node's `durability` row (see `read_changes`); otherwise nothing.
    func confirmDurable(node: String) async throws {
        _ = try await query(
            """
            INSERT INTO \(unescaped: schema).durability (node, confirmed_at)
            SELECT \(node), now() WHERE current_setting('synchronous_standby_names') <> ''
            ON CONFLICT (node) DO UPDATE SET confirmed_at = now()
            """,
            "the durability of what was read"
        )
    }

    /// The group of change `sequence`, if its row is still kept.
    func group(ofChange sequence: UInt64) async throws -> Int64? {
        let result = try await query(
            "SELECT group_id FROM \(unescaped: schema).changes WHERE seq = \(Int64(sequence))", "the group of change \(sequence)"
        )
        for row in result.rows { return try row.decode(Int64.self) }
        return nil
    }

    /// Decodes the parallel arrays a procedure returns changes in.
    private static func changeRows(seqs: [Int64]?, formats: [Int32]?, groups: [Int64]?, prevs: [Int64]?, bodies: [ByteBuffer]?) -> [ChangeRow] {
        guard let seqs, let formats, let groups, let prevs, let bodies else { return [] }
        var rows: [ChangeRow] = []
        rows.reserveCapacity(seqs.count)
        for index in seqs.indices {
            rows.append(
                ChangeRow(
                    sequence: UInt64(seqs[index]), format: UInt32(formats[index]), group: groups[index], previousGroup: prevs[index],
                    record: Array(bodies[index].readableBytesView)
                )
            )
        }
        return rows
    }
}

/// What `commit_group` answered.
struct GroupCommit: Sendable {
    enum Outcome: Sendable {
        /// Committed: its changes are numbered from `first`.
        case committed
        /// Not committed: a change committed since the group's decision touched what it looked at, or
        /// could not be checked; the node applies `missing` and decides the group again.
        case conflict
        /// Not committed: the database's history does not continue the replica's newest change.
        case diverged
    }

    var outcome: Outcome
    /// The number of the group's first change (committed), or the one after the newest (not).
    var first: UInt64
    /// The changes committed after the group's expected newest, before `first`, in order (at most the limit).
    var missing: [ChangeRow]
}

/// The newest change the database holds (`head`, of group `headGroup`) and changes after a number.
struct ChangeBatch: Sendable {
    var head: UInt64
    var headGroup: Int64
    var rows: [ChangeRow]
}

/// The format versions cluster mode writes into its tables.
enum PortableFormatVersion {
    static let change = Int(PortableRecords.changeFormatVersion)
}
