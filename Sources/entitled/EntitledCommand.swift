import ArgumentParser
import Configuration
import EntitledCore
import EntitledServer
import EntitledStorage
// FoundationEssentials, not Foundation (see EntitledConfiguration's SettingsFile.swift): `ProcessInfo`'s environment.
import FoundationEssentials
import Logging

/// `entitled`: the entitlement server.
struct EntitledCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitled",
        abstract: "Answers \"may this user or device use product X / entitlement Y right now?\" over a newline-delimited JSON protocol.",
        discussion: """
            Serves TCP (127.0.0.1:7117 by default) and, with --socket, a Unix socket. When it is ready it \
            prints one line containing "listening on" and the addresses it bound. SIGTERM or SIGINT stops it \
            gracefully; SIGHUP re-reads the --auth file. The protocol is specified in Protocol/PROTOCOL.md.

            Every option can also be set in a JSON configuration file (--config FILE or ENTITLED_CONFIG), one \
            object whose keys are the long option names without their dashes: {"port": 7117, "data-dir": \
            "/var/lib/entitled", "insecure-no-auth": true}. Or in an environment variable: ENTITLED_ and the \
            name upper-cased with - as _ (ENTITLED_DATA_DIR; a flag is true, false, 1 or 0). The command line \
            wins over the environment, which wins over the file.
            """,
        version: EntitledServer.version
    )

    // Every option is optional here, without its default: the parser gives only what the command line
    // says, and `EntitledSettings` layers it over the environment, the file and the defaults (an option
    // with a default here would always win over the other sources).
    @Option(help: ArgumentHelp("Read options from this JSON file: one object whose keys are the long option names without their dashes, such as {\"port\": 7117}. Options on the command line and ENTITLED_* environment variables win over it. Default: ENTITLED_CONFIG, else none.", valueName: "file"))
    var config: String?

    @Option(help: "The TCP address to listen on (default: 127.0.0.1).")
    var host: String?

    @Option(help: "The TCP port to listen on; 0 picks any free port (the ready line shows which). Default: \(ServerConfiguration.defaultPort).")
    var port: Int?

    @Flag(name: .customLong("no-tcp"), help: "Do not listen on TCP (serve the Unix socket only).")
    var tcpDisabled = false

    @Option(name: .customLong("socket"), help: "Also listen on a Unix domain socket at this path.")
    var socketPath: String?

    @Option(help: "The data directory, created if missing: the log and snapshots live there (default: ./entitled-data).")
    var dataDir: String?

    @Option(help: "When the log is forced to disk: always (the default: before each acknowledgement, group commit), everysec (once a second; a machine crash can lose about 1 s) or no (left to the OS).")
    var fsync: FsyncPolicy?

    @Option(help: "What a read is answered from while the log has changes it has not acknowledged yet (not yet synced, with --fsync always): hold (the default: only once the log has them, as Redis with appendfsync always sends no reply before its sync) or answer (at once, from memory, which holds them: faster, but a reader may see a change a crash takes back). See STORAGE.md, \"Reads and unsynced changes\". A cluster node serves committed changes only, either way.")
    var unsyncedReads: UnsyncedReads?

    @Option(help: "What a grant does with a purchase (its originalTransactionId) that another user's membership holds, as on a restore on another account: transfer (the default: the membership moves to the grant's user, recorded in both users' history) or keep (it stays; the grant is refused with conflict).")
    var transferRule: TransferRule?

    @Option(help: "Seconds between snapshots of the whole state (written only when something changed); 0 turns periodic snapshots off. A final snapshot is written at graceful shutdown either way. Default: 60.")
    var snapshotInterval: Int?

    @Option(help: "The longest request line accepted, in bytes; a longer one is answered too_large and its connection closed. Default: \(ServerConfiguration.defaultMaximumLineLength).")
    var maxLineLength: Int?

    @Option(help: "Event loop threads serving connections (default: half the cores, at least one).")
    var eventLoops: Int?

    @Option(
        name: .customLong("busy-poll"),
        help: "The longest, in microseconds, an event loop keeps polling for work before it sleeps (default 50; 0: never). The loop adapts within it: it polls only while requests keep arriving within that time, saving a thread wake-up per round trip, and sleeps at once while traffic is sparse."
    )
    var busyPoll: Int?

    @Option(help: "The lowest level of log lines written to standard error: trace, debug, info (the default), notice, warning, error or critical.")
    var logLevel: Logger.Level?

    @Option(help: "How log lines are written: text (the default, for people) or json (one object per line, for log collectors).")
    var logFormat: LogFormat?

    @Option(help: "The most client connections open at once over TCP, and again over the Unix socket (counted apart); one more is answered busy and closed. Default: \(ServerConfiguration.defaultMaximumConnections).")
    var maxConnections: Int?

    @Option(help: "With --auth: seconds a connection may stay without a successful auth (TLS handshake included) before it is closed; 0 never closes. Default: \(Int(ServerConfiguration.defaultAuthenticationTimeoutSeconds)).")
    var authTimeout: Double?

    @Option(help: "Seconds without a byte from a client after which its connection is closed; 0 never closes. Connections with a request in flight or a watch are never idle. Default: \(Int(ServerConfiguration.defaultIdleTimeoutSeconds)).")
    var idleTimeout: Double?

    @Option(help: "The most requests of one connection answered in one turn of its event loop, so that one pipelining client cannot make the others wait. Default: \(ServerConfiguration.defaultMaximumRequestsPerTurn).")
    var maxRequestsPerTurn: Int?

    @Option(help: "The most users and devices watched at once over all connections (each watch of a user or device counts one); a watch beyond is answered over_limit. Default: \(ServerConfiguration.defaultMaximumSubjectWatches).")
    var maxWatches: Int?

    @Option(help: "On SIGTERM or SIGINT, the most seconds connections get to finish the requests they sent before they are closed (0: at once); the final snapshot follows. Default: \(Int(ServerConfiguration.defaultShutdownTimeoutSeconds)).")
    var shutdownTimeout: Double?

    @Option(help: ArgumentHelp("The most milliseconds a check, memberships or customer request with \"minSeq\" waits for this node to apply that change before it is answered \"stale\" (0 to \(ServerConfiguration.largestMinimumSequenceWaitMilliseconds)). Default: \(ServerConfiguration.defaultMinimumSequenceWaitMilliseconds).", valueName: "ms"))
    var minSeqWait: Int?

    @Option(help: ArgumentHelp("Serve TCP over TLS with this PEM certificate chain (the server's certificate first); needs --tls-key. The Unix socket stays plain.", valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(
        name: .customLong("auth"),
        help: ArgumentHelp(
            "Require authentication with the tokens of this JSON file: a list of {\"name\": ..., \"token\": ..., \"role\": \"check\", \"writer\" or \"admin\"}.",
            valueName: "file"
        )
    )
    var authFile: String?

    @Flag(help: "Listen on a TCP address other machines can reach without --auth. Anyone who can connect can then change every entitlement.")
    var insecureNoAuth = false

    @Flag(
        name: .customLong("no-io-uring"),
        help: "Send with one system call per connection instead of one io_uring submission per loop turn (used by default where the kernel allows it)."
    )
    var noIoUring = false

    @Option(help: ArgumentHelp("The Unix socket file's permissions, in octal: 600 (the default) lets only this user connect, 660 its group too.", valueName: "mode"))
    var socketMode: String?

    @Option(help: ArgumentHelp("Serve Prometheus metrics over HTTP on this port (GET /metrics); off unless given. Never the protocol port.", valueName: "port"))
    var metricsPort: Int?

    @Option(help: ArgumentHelp("The address the metrics port listens on (default: 127.0.0.1). The metrics need no token: keep them on loopback or a private network.", valueName: "address"))
    var metricsHost: String?

    @Option(help: ArgumentHelp("Run as a node of a cluster whose system of record is this PostgreSQL database (14 or later): postgres://USER:PASSWORD@HOST:PORT/DATABASE[?sslmode=...&schema=...]. Any number of nodes may share it; each keeps every membership in memory. Excludes --data-dir. The password never appears in logs, stats or errors.", valueName: "url"))
    var postgres: String?

    @Option(help: ArgumentHelp("This node's name in the cluster's change table and logs (default: host name and process id).", valueName: "name"))
    var nodeName: String?

    @Option(help: ArgumentHelp("With --postgres: the most seconds a write waits for the database (a connection, its group's commit) before it is answered: unavailable when it was certainly not made, outcome_unknown when its commit's answer was lost. Default: 5.", valueName: "seconds"))
    var writeTimeout: Double?

    @Option(help: ArgumentHelp("With --postgres: how long a change stays in the database after a snapshot covers it. A node away for less catches up from the changes, one away longer loads the newest snapshot. Default: 60.", valueName: "seconds"))
    var changeRetention: Int?

    @Option(help: ArgumentHelp("How long the change feed keeps a change, at least: a duration in s, min, h, d or w (such as 30d), or none for no limit of time. Default: 30d.", valueName: "duration"))
    var feedRetention: String?

    @Option(help: ArgumentHelp("The most membership changes the change feed keeps (16 bytes of memory each), at least \(FeedRetention.minimumChanges). Default: \(FeedRetention.standard.changes).", valueName: "count"))
    var feedRetentionChanges: Int?

    func run() async throws {
        try await run(environment: ProcessInfo.processInfo.environment)
    }

    /// Resolves the settings from the command line, `environment` and the configuration file, warns about
    /// unknown `ENTITLED_*` variables, and serves.
    func run(environment: [String: String]) async throws {
        let settings = try EntitledSettings(commandLine: configurationValues, environment: environment)
        settings.warnAboutUnknownVariables()
        try await settings.serve()
    }

    /// What the command line gave, as configuration values by key: the first of the layered sources.
    var configurationValues: [AbsoluteConfigKey: ConfigValue] {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        func give(_ name: String, _ content: ConfigContent?) {
            guard let content else { return }
            values[AbsoluteConfigKey(ConfigKey(name))] = ConfigValue(content, isSecret: false)
        }
        give("config", config.map(ConfigContent.string))
        give("host", host.map(ConfigContent.string))
        give("port", port.map(ConfigContent.int))
        // A flag the command line does not give leaves it to the other sources (it cannot be unset here).
        give("no-tcp", tcpDisabled ? .bool(true) : nil)
        give("socket", socketPath.map(ConfigContent.string))
        give("data-dir", dataDir.map(ConfigContent.string))
        give("fsync", fsync.map { .string($0.rawValue) })
        give("transfer-rule", transferRule.map { .string($0.rawValue) })
        give("unsynced-reads", unsyncedReads.map { .string($0.rawValue) })
        give("snapshot-interval", snapshotInterval.map(ConfigContent.int))
        give("max-line-length", maxLineLength.map(ConfigContent.int))
        give("event-loops", eventLoops.map(ConfigContent.int))
        give("busy-poll", busyPoll.map(ConfigContent.int))
        give("log-level", logLevel.map { .string($0.rawValue) })
        give("log-format", logFormat.map { .string($0.rawValue) })
        give("max-connections", maxConnections.map(ConfigContent.int))
        give("idle-timeout", idleTimeout.map(ConfigContent.double))
        give("auth-timeout", authTimeout.map(ConfigContent.double))
        give("max-requests-per-turn", maxRequestsPerTurn.map(ConfigContent.int))
        give("max-watches", maxWatches.map(ConfigContent.int))
        give("shutdown-timeout", shutdownTimeout.map(ConfigContent.double))
        give("min-seq-wait", minSeqWait.map(ConfigContent.int))
        give("tls-cert", tlsCert.map(ConfigContent.string))
        give("tls-key", tlsKey.map(ConfigContent.string))
        give("auth", authFile.map(ConfigContent.string))
        give("insecure-no-auth", insecureNoAuth ? .bool(true) : nil)
        give("no-io-uring", noIoUring ? .bool(true) : nil)
        give("socket-mode", socketMode.map(ConfigContent.string))
        give("metrics-port", metricsPort.map(ConfigContent.int))
        give("metrics-host", metricsHost.map(ConfigContent.string))
        if let postgres {
            // Secret: swift-configuration never shows it in its access reports.
            values[AbsoluteConfigKey(ConfigKey("postgres"))] = ConfigValue(.string(postgres), isSecret: true)
        }
        give("node-name", nodeName.map(ConfigContent.string))
        give("write-timeout", writeTimeout.map(ConfigContent.double))
        give("change-retention", changeRetention.map(ConfigContent.int))
        give("feed-retention", feedRetention.map(ConfigContent.string))
        give("feed-retention-changes", feedRetentionChanges.map(ConfigContent.int))
        return values
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension FsyncPolicy: ExpressibleByArgument {}
extension TransferRule: ExpressibleByArgument {}
extension UnsyncedReads: ExpressibleByArgument {}
extension LogFormat: ExpressibleByArgument {}
