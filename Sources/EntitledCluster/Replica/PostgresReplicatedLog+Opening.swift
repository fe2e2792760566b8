import EntitledCore
import Logging
import NIOPosix
import PostgresNIO

extension PostgresReplicatedLog {
    /// Connects to the database, creates or upgrades entitled's schema, loads the replica (the newest
    /// snapshot and the changes after it) and starts following the cluster. Needs no local state.
    /// - Throws: `ClusterError` naming what to fix: a wrong URL, password or database name, a schema of
    ///   a newer version, a role without the privileges the schema needs.
    public static func open(
        location: PostgresLocation,
        options: ClusterOptions,
        clock: @escaping @Sendable () -> Timestamp = { Timestamp.now() },
        logger: Logger
    ) async throws(ClusterError) -> PostgresReplicatedLog {
        // The replicator and all its connections live on one event loop (see `Replicator`).
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let connection = try await connect(to: location, options: options, on: eventLoop, logger: logger)
        do {
            let tables = ClusterTables(connection: connection, schema: location.schema, logger: logger)
            let found = try await tables.migrate(user: location.user, database: location.database)
            if found < ClusterTables.schemaVersion {
                logger.notice(
                    found == 0 ? "created the cluster's tables" : "upgraded the cluster's tables",
                    metadata: ["schema": "\(location.schema)", "from": "\(found)", "to": "\(ClusterTables.schemaVersion)"]
                )
            }
            let loaded: (store: EntitlementStore, snapshotSequence: UInt64, replayed: Int)
            do {
                loaded = try await load(tables: tables, clock: clock, logger: logger)
            } catch let error as ClusterError {
                throw error
            } catch {
                throw ClusterError.database("loading the replica from \(location) failed: \(DatabaseFailure(error))")
            }
            let log = PostgresReplicatedLog(
                store: loaded.store, location: location, options: options, logger: logger, eventLoop: eventLoop,
                known: loaded.store.sequence, snapshot: loaded.snapshotSequence
            )
            logger.info(
                "loaded the replica from the database",
                metadata: [
                    "postgres": "\(location)", "node": "\(options.nodeName)", "snapshot": "\(loaded.snapshotSequence)",
                    "replayed": "\(loaded.replayed)", "sequence": "\(loaded.store.sequence)", "memberships": "\(loaded.store.membershipCount)",
                ]
            )
            log.start(on: connection)
            return log
        } catch let error as ClusterError {
            try? await connection.close()
            throw error
        } catch {
            try? await connection.close()
            throw .database("\(DatabaseFailure(error))")
        }
    }
}
