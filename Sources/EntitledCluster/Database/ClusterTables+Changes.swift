import EntitledCore
import EntitledStorage
import NIOCore
import PostgresNIO

/// The change table: what a group of writes locks, reads and appends, and what a follower reads.
extension ClusterTables {
    /// Commits a group in one round trip (`commit_group`, a procedure of the schema, which commits before
    /// it answers): under the cluster's lock, unless a change committed after `expected` (the replica's
    /// newest, which the group was decided against) touched the group's `keys` (or either must be alone),
    /// its records are numbered from the newest change on, stored, the head moved and the commit
    /// announced. Also returns the changes committed after `expected` (up to `limit`), which the node
    /// applies before its own.
    ///
    /// Called outside any transaction: a procedure may commit only there. Its answer comes after its
    /// COMMIT, so `.committed` is certain; a failure of the call leaves the outcome unknown.
    func commitGroup(
        expected: UInt64, records: [[UInt8]], footprint: GroupFootprint, node: String, group: Int64, limit: Int
    ) async throws -> GroupCommit {
        var bindings = PostgresBindings(capacity: 9)
        bindings.append(Int64(expected))
        bindings.append(node)
        bindings.append(group)
        bindings.append(Array(footprint.keys))
        bindings.append(footprint.isExclusive)
        bindings.append(Int32(PortableFormatVersion.change))
        bindings.append(records.map { ByteBuffer(bytes: $0) })
        bindings.append(channel)
        bindings.append(Int32(limit))
        let result = try await query(
            PostgresQuery(unsafeSQL: "CALL \(schema).commit_group($1, $2, $3, $4, $5, $6, $7, $8, $9)", binds: bindings), "the group's commit"
        )
        for row in result.rows {
            let (outcome, first, seqs, formats, groups, bodies) = try row.decode((String, Int64, [Int64]?, [Int32]?, [Int64]?, [ByteBuffer]?).self)
            var missing: [ChangeRow] = []
            if let seqs, let formats, let groups, let bodies {
                missing.reserveCapacity(seqs.count)
                for index in seqs.indices {
                    missing.append(
                        ChangeRow(sequence: UInt64(seqs[index]), format: UInt32(formats[index]), group: groups[index], record: Array(bodies[index].readableBytesView))
                    )
                }
            }
            return GroupCommit(committed: outcome == "committed", first: UInt64(first), missing: missing)
        }
        throw ClusterError.corrupt("\(schema).commit_group answered nothing: the schema was changed by hand")
    }

    /// The newest change number and up to `limit` changes after `sequence`, in order, in one round trip.
    func changes(after sequence: UInt64, limit: Int) async throws -> (head: UInt64, rows: [ChangeRow]) {
        let result = try await query(
            """
            SELECT h.seq, c.seq, c.format, c.group_id, c.record FROM \(unescaped: schema).head h
            LEFT JOIN LATERAL (
                SELECT seq, format, group_id, record FROM \(unescaped: schema).changes
                WHERE seq > \(Int64(sequence)) ORDER BY seq LIMIT \(Int32(limit))) c ON true
            ORDER BY c.seq
            """,
            "changes"
        )
        var head: UInt64?
        var rows: [ChangeRow] = []
        for row in result.rows {
            let (newest, seq, format, group, record) = try row.decode((Int64, Int64?, Int32?, Int64?, ByteBuffer?).self)
            head = UInt64(newest)
            if let seq, let format, let group, let record {
                rows.append(ChangeRow(sequence: UInt64(seq), format: UInt32(format), group: group, record: Array(record.readableBytesView)))
            }
        }
        guard let head else { throw ClusterError.corrupt("\(schema).head holds no row: the schema was changed by hand") }
        return (head, rows)
    }
}

/// What `commit_group` answered.
struct GroupCommit: Sendable {
    /// Whether the group committed; otherwise a change committed since its decision touched its keys.
    var committed: Bool
    /// The number of the group's first change (committed), or the one after the newest (not).
    var first: UInt64
    /// The changes committed after the group's expected newest, before `first`, in order (at most the limit).
    var missing: [ChangeRow]
}

/// The format versions cluster mode writes into its tables.
enum PortableFormatVersion {
    static let change = Int(PortableRecords.changeFormatVersion)
}
