import ArgumentParser
import EntitledCluster
import EntitledCore
import EntitledServer
import EntitledStorage
import Logging
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the server's store lives: a data directory (standalone, the default) or a cluster's PostgreSQL.
/// The rest of `serve()` is the same for both.
enum StoreBackend {
    case directory(DurableStore, DataDirectoryCreation)
    case cluster(PostgresReplicatedLog)

    /// Opens the backend the settings name, logging what it found; logs a critical line and throws
    /// `ExitCode.failure` when it cannot; `nil` when `progress` was asked to stop meanwhile and the data
    /// directory's load gave up (a cluster node's load runs to its end, then the caller stops).
    /// `progress` is told how far the data directory's snapshot and log are loaded.
    static func open(_ settings: EntitledSettings, logger: Logger, progress: LoadingProgress) async throws -> StoreBackend? {
        if let url = settings.postgres {
            return .cluster(try await openCluster(url: url, settings: settings, logger: logger))
        }
        // Validated with the other settings: a refusal here would be a bug, reported as any bad setting.
        let feedRetention = try settings.changeFeedRetention()
        let creation = DataDirectoryCreation(path: settings.dataDir)
        let durable: DurableStore
        do throws(StorageError) {
            durable = try DurableStore(
                directory: settings.dataDir, policy: settings.fsync, logger: logger, progress: progress,
                feedRetention: feedRetention
            )
        } catch .loadingStopped {
            logger.info("gave up loading the data directory: asked to stop", metadata: ["directory": "\(settings.dataDir)"])
            creation.undo()
            return nil
        } catch {
            logger.critical("cannot open the data directory: \(error.message)", metadata: ["code": "\(error.code)"])
            creation.undo()
            throw ExitCode.failure
        }
        let recovery = durable.recovery
        logger.info(
            "recovered the data directory",
            metadata: [
                "directory": "\(settings.dataDir)", "snapshot": "\(recovery.snapshotFile ?? "none")",
                "replayed": "\(recovery.replayedRecords)", "change": "\(recovery.sequence)",
                "memberships": "\(recovery.membershipCount)", "ms": "\(recovery.duration.components.seconds * 1000 + recovery.duration.components.attoseconds / 1_000_000_000_000_000)",
                "fsync": "\(settings.fsync.rawValue)",
            ]
        )
        return .directory(durable, creation)
    }

    private static func openCluster(url: String, settings: EntitledSettings, logger: Logger) async throws -> PostgresReplicatedLog {
        let feedRetention = try settings.changeFeedRetention()
        do throws(ClusterError) {
            let location = try PostgresLocation(url: url)
            var options = ClusterOptions(nodeName: settings.nodeName ?? defaultNodeName())
            options.writeTimeout = .milliseconds(Int64(settings.writeTimeout * 1000))
            options.retentionSeconds = settings.changeRetention
            options.feedRetention = feedRetention
            return try await PostgresReplicatedLog.open(location: location, options: options, logger: logger)
        } catch {
            logger.critical("cannot start as a cluster node: \(error.message)", metadata: ["code": "\(error.code)"])
            throw ExitCode.failure
        }
    }

    /// The host name and process id: unique among running nodes, readable in the change table.
    static func defaultNodeName() -> String {
        var name = [UInt8](repeating: 0, count: 256)
        let host = gethostname(&name, name.count - 1) == 0 ? String(decoding: name.prefix { $0 != 0 }, as: UTF8.self) : "node"
        return "\(host):\(getpid())"
    }

    var processor: RequestProcessor {
        switch self {
        case .directory(let durable, _): return RequestProcessor(durable: durable)
        case .cluster(let log): return RequestProcessor(store: log.store, replicated: log)
        }
    }

    /// What the ready line says the state is kept in.
    var readyDescription: String {
        switch self {
        case .directory(let durable, _): return "data directory \(durable.directory)"
        case .cluster(let log): return "cluster node \(log.options.nodeName) of \(log.location)"
        }
    }

    /// The service that writes snapshots (periodic, and a final one in standalone mode).
    func snapshotService(interval: Int, logger: Logger) -> any Service {
        let every: Duration? = interval > 0 ? .seconds(interval) : nil
        switch self {
        case .directory(let durable, _): return SnapshotService(durable: durable, interval: every, logger: logger)
        case .cluster(let log): return ClusterSnapshotService(log: log, interval: every, logger: logger)
        }
    }

    /// Undoes the start: the server never served.
    func abandon() async {
        switch self {
        case .directory(let durable, let creation):
            durable.close()
            creation.undo()
        case .cluster(let log):
            await log.shutdown()
        }
    }
}
