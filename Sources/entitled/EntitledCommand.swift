import ArgumentParser
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

/// `entitled`: the entitlement server.
struct EntitledCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitled",
        abstract: "Answers \"may this user or device use product X / entitlement Y right now?\" over a newline-delimited JSON protocol.",
        discussion: """
            Serves TCP (127.0.0.1:7117 by default) and, with --socket, a Unix socket. When it is ready it \
            prints one line containing "listening on" and the addresses it bound. SIGTERM or SIGINT stops it \
            gracefully. The protocol is specified in Protocol/PROTOCOL.md.

            Every option can also be set in a JSON configuration file (--config FILE or ENTITLED_CONFIG), one \
            object whose keys are the long option names without their dashes: {"port": 7117, "data-dir": \
            "/var/lib/entitled", "insecure-no-auth": true}. Or in an environment variable: ENTITLED_ and the \
            name upper-cased with - as _ (ENTITLED_DATA_DIR; a flag is true, false, 1 or 0). The command line \
            wins over the environment, which wins over the file.
            """,
        version: EntitledServer.version
    )

    // Read before parsing, by `LayeredArguments`, which turns the file into arguments before these; declared
    // here for --help, for the parser to accept it, and for the start log line.
    @Option(help: ArgumentHelp("Read options from this JSON file: one object whose keys are the long option names without their dashes, such as {\"port\": 7117}. Options on the command line and ENTITLED_* environment variables win over it. Default: ENTITLED_CONFIG, else none.", valueName: "file"))
    var config: String?

    @Option(help: "The TCP address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The TCP port to listen on; 0 picks any free port (the ready line shows which).")
    var port = ServerConfiguration.defaultPort

    @Flag(name: .customLong("no-tcp"), help: "Do not listen on TCP (serve the Unix socket only).")
    var tcpDisabled = false

    @Option(name: .customLong("socket"), help: "Also listen on a Unix domain socket at this path.")
    var socketPath: String?

    @Option(help: "The data directory, created if missing: the log and snapshots live there.")
    var dataDir = "./entitled-data"

    @Option(help: "When the log is forced to disk: always (before each acknowledgement, group commit), everysec (once a second; a machine crash can lose about 1 s) or no (left to the OS).")
    var fsync: FsyncPolicy = .always

    @Option(help: "Seconds between snapshots of the whole state (written only when something changed); 0 turns periodic snapshots off. A final snapshot is written at graceful shutdown either way.")
    var snapshotInterval = 60

    @Option(help: "The longest request line accepted, in bytes; a longer one is answered too_large and its connection closed.")
    var maxLineLength = ServerConfiguration.defaultMaximumLineLength

    @Option(help: "Event loop threads serving connections (default: half the cores, at least one).")
    var eventLoops = ServerConfiguration.defaultEventLoops

    @Option(
        name: .customLong("busy-poll"),
        help: "Microseconds an event loop keeps polling for work before it sleeps (0, the default: sleep at once). Saves a thread wake-up per round trip for clients that send one request at a time, at the cost of up to that much CPU each time a loop runs out of work."
    )
    var busyPoll = ServerConfiguration.defaultBusyPollMicroseconds

    @Option(help: "The lowest level of log lines written to standard error: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Option(help: "How log lines are written: text (for people) or json (one object per line, for log collectors).")
    var logFormat: LogFormat = .text

    @Option(help: "The most client connections open at once; one more is answered busy and closed.")
    var maxConnections = ServerConfiguration.defaultMaximumConnections

    @Option(help: "Seconds without a byte from a client after which its connection is closed; 0 never closes. Connections with a request in flight or a watch are never idle.")
    var idleTimeout = ServerConfiguration.defaultIdleTimeoutSeconds

    @Option(help: "The most requests of one connection answered in one turn of its event loop, so that one pipelining client cannot make the others wait.")
    var maxRequestsPerTurn = ServerConfiguration.defaultMaximumRequestsPerTurn

    @Option(help: "On SIGTERM or SIGINT, the most seconds connections get to finish the requests they sent before they are closed (0: at once); the final snapshot follows.")
    var shutdownTimeout = ServerConfiguration.defaultShutdownTimeoutSeconds

    @Option(help: ArgumentHelp("Serve TCP over TLS with this PEM certificate chain (the server's certificate first); needs --tls-key. The Unix socket stays plain.", valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(
        name: .customLong("auth"),
        help: ArgumentHelp(
            "Require authentication with the tokens of this JSON file: a list of {\"name\": ..., \"token\": ..., \"role\": \"check\" or \"admin\"}.",
            valueName: "file"
        )
    )
    var authFile: String?

    @Flag(help: "Listen on a TCP address other machines can reach without --auth. Anyone who can connect can then change every entitlement.")
    var insecureNoAuth = false

    @Option(help: ArgumentHelp("The Unix socket file's permissions, in octal: 600 lets only this user connect, 660 its group too.", valueName: "mode"))
    var socketMode = String(ServerConfiguration.defaultUnixSocketMode, radix: 8)

    @Option(help: ArgumentHelp("Serve Prometheus metrics over HTTP on this port (GET /metrics); off unless given. Never the protocol port.", valueName: "port"))
    var metricsPort: Int?

    @Option(help: ArgumentHelp("The address the metrics port listens on. The metrics need no token: keep them on loopback or a private network.", valueName: "address"))
    var metricsHost = "127.0.0.1"

    func validate() throws {
        guard (1...ServerConfiguration.largestEventLoopCount).contains(eventLoops) else {
            throw ValidationError("--event-loops must be between 1 and \(ServerConfiguration.largestEventLoopCount), not \(eventLoops)")
        }
        guard (0...ServerConfiguration.largestBusyPollMicroseconds).contains(busyPoll) else {
            throw ValidationError("--busy-poll must be between 0 and \(ServerConfiguration.largestBusyPollMicroseconds) microseconds, not \(busyPoll)")
        }
        guard snapshotInterval >= 0 else { throw ValidationError("--snapshot-interval must be 0 or more seconds, not \(snapshotInterval)") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535, not \(port)") }
        if let metricsPort {
            guard (0...65535).contains(metricsPort) else {
                throw ValidationError("--metrics-port must be between 0 and 65535, not \(metricsPort)")
            }
            if metricsPort == port, port != 0, !tcpDisabled {
                throw ValidationError("--metrics-port must differ from --port: the metrics are never served on the protocol port")
            }
        }
        guard (1...ServerConfiguration.largestMaximumLineLength).contains(maxLineLength) else {
            throw ValidationError(
                "--max-line-length must be between 1 and \(ServerConfiguration.largestMaximumLineLength) (64 MiB), not \(maxLineLength)"
            )
        }
        guard let mode = UInt16(socketMode, radix: 8), mode <= 0o777 else {
            throw ValidationError("--socket-mode must be octal permission bits such as 600 or 660, not \(socketMode)")
        }
        if mode & 0o600 != 0o600 {
            throw ValidationError("--socket-mode \(socketMode) would lock out the server's own user; include 600")
        }
        guard maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1, not \(maxConnections)") }
        guard maxRequestsPerTurn >= 1 else { throw ValidationError("--max-requests-per-turn must be at least 1, not \(maxRequestsPerTurn)") }
        guard (0...3600).contains(shutdownTimeout) else {
            throw ValidationError("--shutdown-timeout must be from 0 to 3600 seconds, not \(shutdownTimeout)")
        }
        guard idleTimeout >= 0, idleTimeout <= 86_400 * 365 else {
            throw ValidationError("--idle-timeout must be from 0 (never) to a year in seconds, not \(idleTimeout)")
        }
        if (tlsCert == nil) != (tlsKey == nil) {
            throw ValidationError("--tls-cert and --tls-key go together: give both, or neither for plain TCP")
        }
        if tcpDisabled && socketPath == nil {
            throw ValidationError("--no-tcp needs --socket PATH: there would be nothing to listen on")
        }
    }

    func run() async throws {
        let level = logLevel
        let format = logFormat
        LoggingSystem.bootstrap { label in format.makeHandler(label: label, level: level) }
        let logger = Logger(label: "entitled")

        var tls: ServerTLS?
        if let tlsCert, let tlsKey {
            do throws(TLSSetupError) {
                tls = try ServerTLS(certificateChainFile: tlsCert, privateKeyFile: tlsKey)
            } catch {
                logger.critical("\(error.message)", metadata: ["code": "\(error.code)"])
                throw ExitCode.failure
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
                "dataDir": "\(dataDir)", "fsync": "\(fsync.rawValue)", "snapshotInterval": "\(snapshotInterval)s",
                "eventLoops": "\(eventLoops)", "busyPoll": "\(busyPoll)µs", "maxLineLength": "\(maxLineLength)",
                "maxConnections": "\(maxConnections)", "idleTimeout": "\(idleTimeout)s", "maxRequestsPerTurn": "\(maxRequestsPerTurn)",
                "shutdownTimeout": "\(shutdownTimeout)s",
                "auth": "\(authFile.map { "\($0) (\(accessTokens?.entries.count ?? 0) tokens)" } ?? (insecureNoAuth ? "off (insecure)" : "off"))",
                "tls": "\(tlsCert ?? "off")", "logLevel": "\(logLevel)", "logFormat": "\(logFormat.rawValue)",
                "config": "\(config ?? "none")",
                "metrics": "\(metricsPort.map { "http://\(metricsHost):\($0)/metrics" } ?? "off")",
            ]
        )
        let durable: DurableStore
        do throws(StorageError) {
            durable = try DurableStore(directory: dataDir, policy: fsync, logger: logger)
        } catch {
            logger.critical("cannot open the data directory: \(error.message)", metadata: ["code": "\(error.code)"])
            throw ExitCode.failure
        }
        let recovery = durable.recovery
        logger.info(
            "recovered the data directory",
            metadata: [
                "directory": "\(dataDir)", "snapshot": "\(recovery.snapshotFile ?? "none")",
                "replayed": "\(recovery.replayedRecords)", "change": "\(recovery.sequence)",
                "memberships": "\(recovery.membershipCount)", "ms": "\(recovery.duration.components.seconds * 1000 + recovery.duration.components.attoseconds / 1_000_000_000_000_000)",
                "fsync": "\(fsync.rawValue)",
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
        configuration.maximumRequestsPerTurn = maxRequestsPerTurn
        configuration.shutdownTimeoutSeconds = shutdownTimeout
        DescriptorLimit.raise(toServe: maxConnections, logger: logger)
        configuration.accessTokens = accessTokens
        configuration.tls = tls
        configuration.allowsUnauthenticatedRemoteClients = insecureNoAuth
        configuration.unixSocketMode = UInt16(socketMode, radix: 8) ?? ServerConfiguration.defaultUnixSocketMode
        if accessTokens == nil, insecureNoAuth {
            logger.warning("serving without authentication on \(host): anyone who can connect can change every entitlement")
        }
        let dataDirectory = dataDir
        let tlsEnabled = tls != nil
        // Set once the metrics port is bound, before the server is ready: the ready line names it.
        let metricsAddress = NIOLockedValueBox<String?>(nil)
        let server = EntitledServer(
            processor: RequestProcessor(durable: durable),
            configuration: configuration,
            logger: logger,
            onReady: { addresses in
                let security = tlsEnabled ? "; TLS on TCP" : ""
                let metrics = metricsAddress.withLockedValue { $0 }.map { "; metrics \($0)" } ?? ""
                let line = "entitled \(EntitledServer.version) listening on \(ReadyLine.describe(addresses)) (data directory \(dataDirectory)\(security)\(metrics))"
                print(line)
                fflush(nil)  // flush stdout at once: scripts wait for this line
                logger.info("ready", metadata: ["addresses": "\(ReadyLine.describe(addresses))"])
            }
        )
        let snapshots = SnapshotService(
            durable: durable,
            interval: snapshotInterval > 0 ? .seconds(snapshotInterval) : nil,
            logger: logger
        )
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
                logger.critical("cannot serve metrics on \(metricsHost):\(metricsPort): \(error)")
                durable.close()
                throw ExitCode.failure
            }
        }
        let group = ServiceGroup(
            services: [snapshots, server],
            gracefulShutdownSignals: [.sigterm, .sigint],
            cancellationSignals: [],
            logger: logger
        )
        do {
            try await group.run()
        } catch let error as ServerError {
            logger.critical("\(error.message)", metadata: ["code": "\(error.code)"])
            await metricsServer?.close()
            durable.close()
            throw ExitCode.failure
        }
        await metricsServer?.close()
        logger.info("stopped")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension FsyncPolicy: ExpressibleByArgument {}
extension LogFormat: ExpressibleByArgument {}
