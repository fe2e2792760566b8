import EntitledStorage
import Logging
import NIOCore
import PostgresNIO

/// entitled's tables in its schema, over one connection: the SQL of cluster mode, in one place.
/// Protocol/CLUSTER.md specifies the tables; `ClusterTables+Schema.swift` creates and upgrades them.
///
/// - `head`: one row, the number of the newest committed change. A group of writes locks it
///   (`SELECT ... FOR UPDATE`) for its transaction: that lock is the cluster's order.
/// - `changes`: each change, by number, as a log record payload (the data directory's format).
/// - `snapshots`: whole images of the store, as snapshot file bytes; the newest is where a node starts.
struct ClusterTables: Sendable {
    let connection: PostgresConnection
    let schema: String
    let logger: Logger
    /// The longest one operation may take (`withDeadline`); past it the connection is closed and the
    /// operation fails, so that a connection that stopped answering never holds the node.
    var timeout: Duration = .seconds(300)

    /// Runs `body` under `timeout`, refusing at once on a connection already closed.
    func bounded<T: Sendable>(_ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        guard !connection.isClosed else { throw DatabaseFailure(timeout: "the connection to the database is closed") }
        do {
            return try await withDeadline(timeout, what: what, body)
        } catch let failure as DatabaseFailure where failure.sqlState == nil && !connection.isClosed {
            try? await connection.close()
            throw failure
        }
    }

    /// The channel on which a committed group is announced (`NOTIFY`): a wake-up, never the truth.
    var channel: String { "\(schema)_changes" }

    func run(_ sql: String) async throws {
        let (connection, logger) = (self.connection, self.logger)
        try await bounded(sql) { _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) }
    }

    func begin() async throws { try await run("BEGIN") }
    func commit() async throws { try await run("COMMIT") }
    func rollback() async throws { try await run("ROLLBACK") }

    func head(locking: Bool = false) async throws -> UInt64 {
        let tables = self
        return try await bounded("head") { try await tables.headUnbounded(locking: locking) }
    }

    /// The newest committed change; with `locking`, inside a transaction, also takes the cluster's write
    /// lock until the transaction ends (waiting while another node's group holds it).
    private func headUnbounded(locking: Bool = false) async throws -> UInt64 {
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT seq FROM \(schema).head" + (locking ? " FOR UPDATE" : "")), logger: logger
        )
        for try await seq in rows.decode(Int64.self) { return UInt64(seq) }
        throw ClusterError.corrupt("\(schema).head holds no row: the schema was changed by hand")
    }

    func changes(after sequence: UInt64, limit: Int) async throws -> [(sequence: UInt64, format: UInt32, record: [UInt8])] {
        let tables = self
        return try await bounded("changes") { try await tables.changesUnbounded(after: sequence, limit: limit) }
    }

    /// Up to `limit` changes after `sequence`, in order: (number, format version, record payload).
    private func changesUnbounded(after sequence: UInt64, limit: Int) async throws -> [(sequence: UInt64, format: UInt32, record: [UInt8])] {
        let rows = try await connection.query(
            "SELECT seq, format, record FROM \(unescaped: schema).changes WHERE seq > \(Int64(sequence)) ORDER BY seq LIMIT \(limit)",
            logger: logger
        )
        var result: [(sequence: UInt64, format: UInt32, record: [UInt8])] = []
        for try await (seq, format, record) in rows.decode((Int64, Int32, ByteBuffer).self) {
            result.append((UInt64(seq), UInt32(format), Array(record.readableBytesView)))
        }
        return result
    }

    func newestSnapshot() async throws -> (sequence: UInt64, bytes: [UInt8])? {
        let tables = self
        return try await bounded("newestSnapshot") { try await tables.newestSnapshotUnbounded() }
    }

    /// The newest snapshot: its change number and bytes.
    private func newestSnapshotUnbounded() async throws -> (sequence: UInt64, bytes: [UInt8])? {
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT seq, image FROM \(schema).snapshots ORDER BY seq DESC LIMIT 1"), logger: logger
        )
        for try await (seq, image) in rows.decode((Int64, ByteBuffer).self) {
            return (UInt64(seq), Array(image.readableBytesView))
        }
        return nil
    }

    func newestSnapshotSequence() async throws -> UInt64 {
        let tables = self
        return try await bounded("newestSnapshotSequence") { try await tables.newestSnapshotSequenceUnbounded() }
    }

    /// The number of the newest snapshot (0 if none).
    private func newestSnapshotSequenceUnbounded() async throws -> UInt64 {
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT coalesce(max(seq), 0) FROM \(schema).snapshots"), logger: logger
        )
        for try await seq in rows.decode(Int64.self) { return UInt64(seq) }
        return 0
    }

    func append(_ records: [(sequence: UInt64, record: [UInt8])], node: String, group: Int64) async throws {
        let tables = self
        return try await bounded("append") { try await tables.appendUnbounded(records, node: node, group: group) }
    }

    /// Inserts a group's changes, sets the head to the last of them and announces it on commit: one
    /// statement (one round trip) inside the transaction that locked the head.
    private func appendUnbounded(_ records: [(sequence: UInt64, record: [UInt8])], node: String, group: Int64) async throws {
        guard let last = records.last?.sequence else { return }
        var bindings = PostgresBindings(capacity: 5 + 2 * records.count)
        bindings.append(node)
        bindings.append(group)
        bindings.append(Int32(PortableFormatVersion.change))
        bindings.append(Int64(last))
        bindings.append(channel)
        var values = ""
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
        try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
    }

    func group(of sequence: UInt64) async throws -> Int64? {
        let tables = self
        return try await bounded("group") { try await tables.groupUnbounded(of: sequence) }
    }

    /// The group that committed change `sequence`, if the table still holds it.
    private func groupUnbounded(of sequence: UInt64) async throws -> Int64? {
        let rows = try await connection.query(
            "SELECT group_id FROM \(unescaped: schema).changes WHERE seq = \(Int64(sequence))", logger: logger
        )
        for try await group in rows.decode(Int64.self) { return group }
        return nil
    }

    func trySnapshotLock() async throws -> Bool {
        let tables = self
        return try await bounded("trySnapshotLock") { try await tables.trySnapshotLockUnbounded() }
    }

    /// Tries to take the snapshot writer's lock for this transaction: one node writes a snapshot at a time.
    private func trySnapshotLockUnbounded() async throws -> Bool {
        let rows = try await connection.query(
            "SELECT pg_try_advisory_xact_lock(hashtext(\(schema + ".snapshot")))", logger: logger
        )
        for try await taken in rows.decode(Bool.self) { return taken }
        return false
    }

    func storeSnapshot(sequence: UInt64, node: String, memberships: Int, bytes: [UInt8], retention: Int) async throws -> Int {
        let tables = self
        return try await bounded("storeSnapshot") { try await tables.storeSnapshotUnbounded(sequence: sequence, node: node, memberships: memberships, bytes: bytes, retention: retention) }
    }

    /// Stores a snapshot of change `sequence` and removes older snapshots and the changes it covers that
    /// were committed more than `retention` seconds ago (younger ones stay, so that a node that lost its
    /// connection during a commit can still find out whether its group committed).
    private func storeSnapshotUnbounded(sequence: UInt64, node: String, memberships: Int, bytes: [UInt8], retention: Int) async throws -> Int {
        try await connection.query(
            """
            INSERT INTO \(unescaped: schema).snapshots (seq, node, memberships, image)
            VALUES (\(Int64(sequence)), \(node), \(Int64(memberships)), \(ByteBuffer(bytes: bytes)))
            ON CONFLICT (seq) DO NOTHING
            """,
            logger: logger
        )
        try await connection.query("DELETE FROM \(unescaped: schema).snapshots WHERE seq < \(Int64(sequence))", logger: logger)
        return try await removeCoveredChanges(upTo: sequence, retention: retention)
    }

    /// Removes the changes up to `sequence` that were committed more than `retention` seconds ago.
    func removeCoveredChanges(upTo sequence: UInt64, retention: Int) async throws -> Int {
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    WITH removed AS (
                        DELETE FROM \(schema).changes
                        WHERE seq <= $1 AND committed_at < now() - make_interval(secs => $2)
                        RETURNING 1)
                    SELECT count(*) FROM removed
                    """,
                binds: { var b = PostgresBindings(); b.append(Int64(sequence)); b.append(Double(retention)); return b }()
            ),
            logger: logger
        )
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }
}

/// The format versions cluster mode writes into its tables.
enum PortableFormatVersion {
    static let change = Int(PortableRecords.changeFormatVersion)
}
