import EntitledCore
import Logging
import NIOPosix
import PostgresNIO

extension PostgresReplicatedLog {
    /// Connects to the database, creates or upgrades entitled's schema, notes the database's identity (a
    /// failover since the history was last written starts a new range of numbers), reads its clock, loads
    /// the replica (the newest snapshot and the changes after it) and starts following the cluster. Needs
    /// no local state.
    /// - Throws: `ClusterError` naming what to fix: a wrong URL, password or database name, a standby
    ///   instead of the primary, a schema of a newer version, a role without the privileges the schema needs.
    public static func open(location: PostgresLocation, options: ClusterOptions, logger: Logger) async throws(ClusterError) -> PostgresReplicatedLog {
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
            let clock = DatabaseClock()
            let marking: HistoryMarking
            let loaded: LoadedReplica
            do {
                marking = try await tables.markHistory(node: options.nodeName, group: Int64.random(in: 1...Int64.max), beyond: 0)
                Replicator.log(marking, logger: logger)
                clock.adopt(try await tables.bestClockReading())
                loaded = try await load(
                    tables: tables, clock: { clock.now() }, confirmingAs: options.nodeName, feedRetention: options.feedRetention, logger: logger
                )
            } catch let error as ClusterError {
                throw error
            } catch {
                let failure = DatabaseFailure(error)
                if failure.isRecovery {
                    throw ClusterError.connection(
                        "the database at \(location) is a standby (in recovery), which takes no writes: point --postgres at the primary (\(failure))"
                    )
                }
                throw ClusterError.database("loading the replica from \(location) failed: \(failure)")
            }
            clock.raiseFloor(to: loaded.store.newestChangeTime)
            let log = PostgresReplicatedLog(
                store: loaded.store, anchor: loaded.anchor, clock: clock, database: marking.database, location: location, options: options,
                logger: logger, eventLoop: eventLoop, known: loaded.store.sequence, snapshot: loaded.snapshotSequence, marks: loaded.marks
            )
            logger.info(
                "loaded the replica from the database",
                metadata: [
                    "postgres": "\(location)", "node": "\(options.nodeName)", "snapshot": "\(loaded.snapshotSequence)",
                    "replayed": "\(loaded.replayed)", "sequence": "\(loaded.store.sequence)", "memberships": "\(loaded.store.membershipCount)",
                    "database": "\(marking.database?.description ?? "unknown")",
                    "databaseAheadSeconds": "\(clock.reading.map { "\($0.offsetSeconds)" } ?? "unknown")",
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
