import ArgumentParser
import EntitledCluster
import EntitledCore
import EntitledMetrics
import EntitledServer
import EntitledStorage
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

// Not Foundation (see EntitledStorage's Threading.swift): only the C library's `fflush` is needed here.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension EntitledSettings {
    /// Opens the data directory, starts the server (and the metrics port) and serves until SIGTERM or SIGINT.
    func serve() async throws {
        let level = logLevel
        let format = logFormat
        LoggingSystem.bootstrap { label in format.makeHandler(label: label, level: level) }
        let logger = Logger(label: "entitled")
        // Before the auth file is read: a SIGHUP from now on is acted on once the server runs (see
        // `TokenReloadService`), whatever the start is doing when it comes.
        let hangups = await TokenReloadService.trapHangups()
        // SIGTERM and SIGINT too, before anything is bound or opened: a stop is honoured in every phase.
        let stopSignals = StopSignals.trap(logger: logger)

        var tls: ServerTLS?
        if let tlsCert, let tlsKey {
            do throws(TLSSetupError) {
                tls = try ServerTLS(certificateChainFile: tlsCert, privateKeyFile: tlsKey)
            } catch {
                logger.critical("\(error.message)", metadata: ["code": "\(error.code)"])
                throw ExitCode.failure
            }
            if let warning = tls?.expiryWarning(now: Int64(time(nil))) {
                logger.warning("\(warning)", metadata: ["file": "\(tlsCert)"])
            }
        }

        var accessTokens: AccessTokens?
        if let authFile {
            do throws(AuthFileError) {
                accessTokens = try AccessTokens(contentsOfFile: authFile)
            } catch {
                logger.critical("\(error.message)", metadata: ["code": "\(error.code)"])
                throw ExitCode.failure
            }
            if AccessTokens.isReadableByOthers(path: authFile) {
                logger.warning("the auth file can be read by other users of this machine; chmod 600 it", metadata: ["file": "\(authFile)"])
            }
            logger.info("authentication required", metadata: ["tokens": "\(accessTokens?.entries.count ?? 0)"])
        }

        // The effective configuration, once, at start: what an operator reading the log needs to know what
        // ran. The auth file's tokens are counted, never shown.
        logger.info(
            "starting entitled \(EntitledServer.version)",
            metadata: [
                "tcp": "\(tcpDisabled ? "off" : "\(host):\(port)")", "socket": "\(socketPath.map { "\($0) (mode \(socketMode))" } ?? "off")",
                "dataDir": "\(postgres == nil ? dataDir : "none (cluster)")", "fsync": "\(postgres == nil ? fsync.rawValue : "n/a (cluster)")",
                "postgres": "\(postgres.flatMap { try? PostgresLocation(url: $0).description } ?? (postgres == nil ? "off" : "invalid"))", "snapshotInterval": "\(snapshotInterval)s",
                "eventLoops": "\(eventLoops)", "busyPoll": busyPoll == 0 ? "off" : "adaptive up to \(busyPoll)µs", "ioUring": "\(noIoUring ? "off" : "on where the kernel allows")", "maxLineLength": "\(maxLineLength)",
                "maxConnections": "\(maxConnections)", "idleTimeout": "\(idleTimeout)s", "authTimeout": "\(authFile == nil ? "n/a" : "\(authTimeout)s")", "maxRequestsPerTurn": "\(maxRequestsPerTurn)", "maxWatches": "\(maxWatches)",
                "shutdownTimeout": "\(shutdownTimeout)s", "minSeqWait": "\(minSeqWait)ms", "feedRetention": "\((try? changeFeedRetention())?.description ?? feedRetention)", "transferRule": "\(transferRule.rawValue)", "unsyncedReads": "\(postgres == nil ? unsyncedReads.rawValue : "n/a (cluster)")",
                "auth": "\(authFile.map { "\($0) (\(accessTokens?.entries.count ?? 0) tokens)" } ?? (insecureNoAuth ? "off (insecure)" : "off"))",
                "tls": "\(tlsCert ?? "off")", "logLevel": "\(logLevel)", "logFormat": "\(logFormat.rawValue)",
                "config": "\(config ?? "none")",
                "metrics": "\(metricsPort.map { "http://\(metricsHost):\($0)/metrics" } ?? "off")",
            ]
        )
        var configuration = ServerConfiguration(
            tcp: tcpDisabled ? nil : .init(host: host, port: port),
            unixSocketPath: socketPath,
            maximumLineLength: maxLineLength,
            eventLoops: eventLoops,
            busyPollMicroseconds: busyPoll
        )
        configuration.maximumConnections = maxConnections
        configuration.idleTimeoutSeconds = idleTimeout
        configuration.authenticationTimeoutSeconds = authTimeout
        configuration.maximumRequestsPerTurn = maxRequestsPerTurn
        configuration.shutdownTimeoutSeconds = shutdownTimeout
        configuration.minimumSequenceWaitMilliseconds = minSeqWait
        configuration.unsyncedReads = unsyncedReads
        DescriptorLimit.raise(toServe: maxConnections, logger: logger)
        configuration.accessTokens = accessTokens
        configuration.accessTokenFile = authFile
        configuration.tls = tls
        configuration.allowsUnauthenticatedRemoteClients = insecureNoAuth
        configuration.usesIoUring = !noIoUring
        configuration.unixSocketMode = UInt16(socketMode, radix: 8) ?? ServerConfiguration.defaultUnixSocketMode
        if accessTokens == nil, socketPath != nil, configuration.unixSocketMode & 0o002 != 0 {
            logger.warning(
                "the Unix socket is writable by every user of this machine (mode \(socketMode)) and no --auth is set: any local user can change every entitlement; use --socket-mode 660 or --auth"
            )
        }
        if accessTokens == nil, insecureNoAuth {
            logger.warning("serving without authentication on \(host): anyone who can connect can change every entitlement")
        }
        // The addresses are bound now and answer `loading` while the store loads (seconds to minutes at
        // millions of memberships), so that clients and load balancers see a starting server, not a
        // down one; the server then serves on the same sockets.
        let progress = LoadingProgress()
        if stopSignals.isRequested {
            logger.info("stopped before serving")
            return
        }
        let loading: LoadingListener
        do throws(ServerError) {
            loading = try LoadingListener.start(configuration: configuration, progress: progress, logger: logger)
        } catch {
            logger.critical("\(error.message)", metadata: ["code": "\(error.code)"])
            throw ExitCode.failure
        }
        logger.info("answering `loading` while the data loads", metadata: ["addresses": "\(ReadyLine.describe(loading.addresses))"])
        stopSignals.onStop { progress.requestStop() }
        let opened: StoreBackend?
        do {
            opened = try await StoreBackend.open(self, logger: logger, progress: progress)
        } catch {
            loading.finish().release()
            throw error
        }
        // Stopped while loading (the load gave up), or right after it: the server never serves. Its
        // addresses and Unix socket file go, and so does the lock; exit status 0, as for any stop.
        guard let backend = opened, !stopSignals.isRequested else {
            loading.finish().release()
            await opened?.abandon()
            logger.info("stopped before serving")
            return
        }
        configuration.boundListeners = loading.finish()
        let stateDescription = backend.readyDescription
        let tlsEnabled = tls != nil
        // Set once the metrics port is bound, before the server is ready: the ready line names it.
        let metricsAddress = NIOLockedValueBox<String?>(nil)
        var processor = backend.processor
        processor.transferRule = transferRule
        processor.maximumSubjectWatches = maxWatches
        let server = EntitledServer(
            processor: processor,
            configuration: configuration,
            logger: logger,
            onReady: { addresses in
                let security = tlsEnabled ? "; TLS on TCP" : ""
                let metrics = metricsAddress.withLockedValue { $0 }.map { "; metrics \($0)" } ?? ""
                let line = "entitled \(EntitledServer.version) listening on \(ReadyLine.describe(addresses)) (\(stateDescription)\(security)\(metrics))"
                print(line)
                fflush(nil)  // flush stdout at once: scripts wait for this line
                logger.info("ready", metadata: ["addresses": "\(ReadyLine.describe(addresses))"])
            }
        )
        let snapshots = backend.snapshotService(interval: snapshotInterval, logger: logger)
        var metricsServer: MetricsHTTPServer?
        if let metricsPort {
            do {
                let started = try await MetricsHTTPServer.start(host: metricsHost, port: metricsPort, exporter: PrometheusExporter(server: server))
                metricsServer = started
                let address = "http://\(metricsHost.contains(":") ? "[\(metricsHost)]" : metricsHost):\(started.port)/metrics"
                metricsAddress.withLockedValue { $0 = address }
                logger.info("serving Prometheus metrics", metadata: ["address": "\(address)"])
                if !LoopbackAddress.isLoopback(metricsHost) {
                    logger.warning("the metrics are served without authentication on \(metricsHost): anyone who can connect can read them")
                }
            } catch {
                if let error = error as? IOError, error.errnoCode == EADDRINUSE {
                    logger.critical("cannot serve metrics on \(metricsHost):\(metricsPort): the port is already in use; give --metrics-port another port (0 picks a free one) or stop what listens there")
                } else {
                    logger.critical("cannot serve metrics on \(metricsHost):\(metricsPort): \(error)")
                }
                await backend.abandon()
                throw ExitCode.failure
            }
        }
        let group = ServiceGroup(
            // The reload service last: a graceful shutdown stops the services from the last, so SIGHUP is no
            // longer handled once the server begins to stop.
            services: [snapshots, server, TokenReloadService(server: server, logger: logger, hangups: hangups)],
            // Not the group's own signals: `stopSignals` has trapped them since the start and hands them on.
            gracefulShutdownSignals: [],
            cancellationSignals: [],
            logger: logger
        )
        stopSignals.onStop { Task { await group.triggerGracefulShutdown() } }
        do {
            try await group.run()
        } catch let error as ServerError {
            // Thrown only by the server's start (binding): it never served, so a directory it created goes.
            logger.critical("\(error.message)", metadata: ["code": "\(error.code)"])
            await metricsServer?.close()
            await backend.abandon()
            throw ExitCode.failure
        }
        await metricsServer?.close()
        logger.info("stopped")
    }
}
