import EntitledStorage
import NIOCore
import PostgresNIO

/// The change table: what a group of writes locks, reads and appends, and what a follower reads.
extension ClusterTables {
    /// Takes the cluster's write lock (inside a transaction) and reads, in the same round trip, the
    /// newest change number, this transaction's id, and up to `limit` changes after `sequence` (those
    /// other nodes committed since this replica's newest): `lock_head`, a function of the schema, whose
    /// second statement sees what the lock's previous holder committed.
    func lockHead(after sequence: UInt64, limit: Int) async throws -> (head: UInt64, transaction: String, rows: [ChangeRow]) {
        let result = try await query(
            "SELECT head, xact, seq, format, group_id, record FROM \(unescaped: schema).lock_head(\(Int64(sequence)), \(Int32(limit)))",
            "lock_head"
        )
        var head: UInt64?
        var transaction = ""
        var rows: [ChangeRow] = []
        for row in result.rows {
            let (lockedHead, xact, seq, format, group, record) = try row.decode((Int64, String, Int64?, Int32?, Int64?, ByteBuffer?).self)
            head = UInt64(lockedHead)
            transaction = xact
            if let seq, let format, let group, let record {
                rows.append(ChangeRow(sequence: UInt64(seq), format: UInt32(format), group: group, record: Array(record.readableBytesView)))
            }
        }
        guard let head else { throw ClusterError.corrupt("\(schema).head holds no row: the schema was changed by hand") }
        return (head, transaction, rows)
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

    /// Inserts a group's changes, sets the head to the last of them and announces it on commit: one
    /// statement (one round trip) inside the transaction that locked the head.
    func append(_ records: [(sequence: UInt64, record: [UInt8])], node: String, group: Int64) async throws {
        guard let last = records.last?.sequence else { return }
        var bindings = PostgresBindings(capacity: 5 + 2 * records.count)
        bindings.append(node)
        bindings.append(group)
        bindings.append(Int32(PortableFormatVersion.change))
        bindings.append(Int64(last))
        bindings.append(channel)
        var values = ""
        values.reserveCapacity(records.count * 24)
        for (index, record) in records.enumerated() {
            bindings.append(Int64(record.sequence))
            bindings.append(ByteBuffer(bytes: record.record))
            values += (index == 0 ? "" : ", ") + "($\(6 + 2 * index), $3, $1, $2, $\(7 + 2 * index))"
        }
        let sql = """
            WITH inserted AS (
                INSERT INTO \(schema).changes (seq, format, node, group_id, record) VALUES \(values) RETURNING 1),
            moved AS (UPDATE \(schema).head SET seq = $4 RETURNING seq)
            SELECT pg_notify($5, seq::text), (SELECT count(*) FROM inserted) FROM moved
            """
        _ = try await query(PostgresQuery(unsafeSQL: sql, binds: bindings), "the group's changes")
    }
}

/// The format versions cluster mode writes into its tables.
enum PortableFormatVersion {
    static let change = Int(PortableRecords.changeFormatVersion)
}
