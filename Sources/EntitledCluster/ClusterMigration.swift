import EntitledCore
import EntitledStorage
import Logging
import PostgresNIO

/// Copies a whole store between a data directory and a cluster's database: the operator tool's
/// `to-postgres` (start a cluster from a standalone server's state) and `from-postgres` (a backup, or a
/// way back to standalone mode). Both keep the change numbers, so nothing after the copy is renumbered.
public enum ClusterMigration {
    /// Stores `image` as the first snapshot of an empty cluster database (its tables are created if
    /// missing); the next change is numbered `image.sequence + 1`.
    /// - Throws: `ClusterError.notEmpty` when the database already holds changes or snapshots.
    public static func importImage(_ image: StoreImage, into location: PostgresLocation, logger: Logger) async throws(ClusterError) {
        let options = ClusterOptions(nodeName: "entitled-datadir")
        let connection = try await PostgresReplicatedLog.connect(to: location, options: options, logger: logger)
        defer { Task { try? await connection.close() } }
        let tables = ClusterTables(connection: connection, schema: location.schema, logger: logger)
        try await tables.migrate(user: location.user, database: location.database)
        do {
            try await tables.begin()
            let head = try await tables.head(locking: true).sequence
            let snapshot = try await tables.newestSnapshotSequence()
            guard head == 0, snapshot == 0, try await tables.changes(after: 0, limit: 1).rows.isEmpty else {
                try await tables.rollback()
                throw ClusterError.notEmpty(
                    "the database at \(location) already holds entitled's state (newest change \(head)); copy into an empty database or schema"
                )
            }
            let clean = image.withoutErasedMemberships()
            // The history's first anchor: the group the next change will say it follows.
            let anchor = Int64.random(in: 1...Int64.max)
            _ = try await tables.storeSnapshot(
                sequence: clean.sequence, group: anchor, node: options.nodeName, memberships: clean.memberships.count,
                bytes: PortableRecords.encodeSnapshot(clean), retention: 0
            )
            try await connection.query(
                "UPDATE \(unescaped: location.schema).head SET seq = \(Int64(clean.sequence)), group_id = \(anchor)", logger: logger
            )
            try await tables.commit()
        } catch let error as ClusterError {
            throw error
        } catch {
            try? await tables.rollback()
            throw .database("copying into \(location) failed: \(DatabaseFailure(error))")
        }
    }

    /// The whole state the cluster's database holds now: its newest snapshot and every change after it.
    public static func exportImage(from location: PostgresLocation, logger: Logger) async throws(ClusterError) -> StoreImage {
        let options = ClusterOptions(nodeName: "entitled-datadir")
        let connection = try await PostgresReplicatedLog.connect(to: location, options: options, logger: logger)
        defer { Task { try? await connection.close() } }
        let tables = ClusterTables(connection: connection, schema: location.schema, logger: logger)
        do {
            let found = try await tables.schemaVersionFound()
            guard found > 0 else {
                throw ClusterError.corrupt("the database at \(location) holds no entitled tables in schema \(location.schema)")
            }
            guard found <= ClusterTables.schemaVersion else {
                throw ClusterError.schemaTooNew(found: found, known: ClusterTables.schemaVersion)
            }
            // One consistent view: a snapshot written meanwhile cannot remove changes this read needs.
            try await tables.run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            let loaded = try await PostgresReplicatedLog.load(tables: tables, clock: { Timestamp.now() }, confirmingAs: nil, logger: logger)
            try await tables.commit()
            return loaded.store.image()
        } catch let error as ClusterError {
            throw error
        } catch {
            throw .database("reading \(location) failed: \(DatabaseFailure(error))")
        }
    }
}
