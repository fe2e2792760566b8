import NIOCore
import PostgresNIO

/// The snapshot table: the newest image of the store, where a node starts.
extension ClusterTables {
    /// The newest snapshot: its change number, that change's group, and its bytes.
    func newestSnapshot() async throws -> (sequence: UInt64, group: Int64, bytes: [UInt8])? {
        let result = try await query(
            PostgresQuery(unsafeSQL: "SELECT seq, group_id, image FROM \(schema).snapshots ORDER BY seq DESC LIMIT 1"), "the newest snapshot"
        )
        for row in result.rows {
            let (seq, group, image) = try row.decode((Int64, Int64, ByteBuffer).self)
            return (UInt64(seq), group, Array(image.readableBytesView))
        }
        return nil
    }

    /// The number of the newest snapshot (0 if none).
    func newestSnapshotSequence() async throws -> UInt64 {
        let result = try await query(PostgresQuery(unsafeSQL: "SELECT coalesce(max(seq), 0) FROM \(schema).snapshots"), "the newest snapshot's number")
        for row in result.rows { return UInt64(try row.decode(Int64.self)) }
        return 0
    }

    /// Whether the newest snapshot was taken less than `seconds` ago.
    func hasSnapshot(youngerThan seconds: Double) async throws -> Bool {
        let result = try await query(
            "SELECT coalesce(max(taken_at) > now() - make_interval(secs => \(seconds)), false) FROM \(unescaped: schema).snapshots",
            "the newest snapshot's age"
        )
        for row in result.rows { return try row.decode(Bool.self) }
        return false
    }

    /// Tries to take the snapshot writer's lock for this transaction: one node writes a snapshot at a time.
    func trySnapshotLock() async throws -> Bool {
        let result = try await query("SELECT pg_try_advisory_xact_lock(hashtext(\(schema + ".snapshot")))", "the snapshot lock")
        for row in result.rows { return try row.decode(Bool.self) }
        return false
    }

    /// Stores a snapshot of change `sequence` (of group `group`) and removes older snapshots and the changes
    /// it covers that were committed more than `retention` seconds ago (younger ones stay, so that a node
    /// away for a moment catches up from changes rather than from the whole snapshot). Returns how many
    /// changes went.
    func storeSnapshot(sequence: UInt64, group: Int64, node: String, memberships: Int, bytes: [UInt8], retention: Int) async throws -> Int {
        _ = try await query(
            """
            INSERT INTO \(unescaped: schema).snapshots (seq, group_id, node, memberships, image)
            VALUES (\(Int64(sequence)), \(group), \(node), \(Int64(memberships)), \(ByteBuffer(bytes: bytes)))
            ON CONFLICT (seq) DO NOTHING
            """,
            "the snapshot"
        )
        _ = try await query("DELETE FROM \(unescaped: schema).snapshots WHERE seq < \(Int64(sequence))", "older snapshots")
        return try await removeCoveredChanges(upTo: sequence, retention: retention)
    }

    /// Removes the changes up to `sequence` that were committed more than `retention` seconds ago.
    func removeCoveredChanges(upTo sequence: UInt64, retention: Int) async throws -> Int {
        let result = try await query(
            """
            WITH removed AS (
                DELETE FROM \(unescaped: schema).changes
                WHERE seq <= \(Int64(sequence)) AND committed_at < now() - make_interval(secs => \(Double(retention)))
                RETURNING 1),
            forgotten AS (
                DELETE FROM \(unescaped: schema).groups
                WHERE last_seq <= \(Int64(sequence)) AND committed_at < now() - make_interval(secs => \(Double(retention)))
                RETURNING 1)
            SELECT (SELECT count(*) FROM removed) + 0 * (SELECT count(*) FROM forgotten)
            """,
            "covered changes"
        )
        for row in result.rows { return Int(try row.decode(Int64.self)) }
        return 0
    }
}
