import ArgumentParser
import EntitledCore
import EntitledServer
import EntitledStorage
import Logging

/// The settings `entitled` runs with, each resolved from its sources by swift-configuration: the command
/// line, then the `ENTITLED_*` environment, then the configuration file, then the built-in default
/// (`EntitledSettings+Reading`). Every value, wherever it came from, is checked by `validate()`.
struct EntitledSettings: Sendable {
    var config: String?
    var host = "127.0.0.1"
    var port = ServerConfiguration.defaultPort
    var tcpDisabled = false
    var socketPath: String?
    var dataDir = "./entitled-data"
    var fsync: FsyncPolicy = .always
    /// What a grant does with a purchase another user holds (`--transfer-rule`).
    var transferRule: TransferRule = .transfer
    /// What reads are answered from while the log has unacknowledged changes (`--unsynced-reads`).
    var unsyncedReads: UnsyncedReads = ServerConfiguration().unsyncedReads
    var snapshotInterval = 60
    var maxLineLength = ServerConfiguration.defaultMaximumLineLength
    var eventLoops = ServerConfiguration.defaultEventLoops
    var busyPoll = ServerConfiguration.defaultBusyPollMicroseconds
    var logLevel: Logger.Level = .info
    var logFormat: LogFormat = .text
    var maxConnections = ServerConfiguration.defaultMaximumConnections
    var idleTimeout = ServerConfiguration.defaultIdleTimeoutSeconds
    var authTimeout = ServerConfiguration.defaultAuthenticationTimeoutSeconds
    var maxRequestsPerTurn = ServerConfiguration.defaultMaximumRequestsPerTurn
    var maxWatches = ServerConfiguration.defaultMaximumSubjectWatches
    var shutdownTimeout = ServerConfiguration.defaultShutdownTimeoutSeconds
    var minSeqWait = ServerConfiguration.defaultMinimumSequenceWaitMilliseconds
    var tlsCert: String?
    var tlsKey: String?
    var authFile: String?
    var insecureNoAuth = false
    var noIoUring = false
    var socketMode = String(ServerConfiguration.defaultUnixSocketMode, radix: 8)
    var metricsPort: Int?
    var metricsHost = "127.0.0.1"
    /// Cluster mode's database URL (it holds a password: never logged; `PostgresLocation` prints it without).
    var postgres: String?
    var nodeName: String?
    var writeTimeout = 5.0
    /// Seconds a change stays in a cluster's database after a snapshot covers it (`--change-retention`).
    var changeRetention = 60
    /// How long the change feed keeps a change (`--feed-retention`): a fixed duration, or `none`.
    var feedRetention = "30d"
    /// The most membership changes the change feed keeps (`--feed-retention-changes`).
    var feedRetentionChanges = FeedRetention.standard.changes
    /// Whether some source named the data directory (cluster mode keeps none, and says so).
    var dataDirGiven = false
    var fsyncGiven = false
    /// `ENTITLED_*` variables that are no setting: warned about once the log's format is known.
    var unknownVariables: [String] = []

    /// Refuses values no source may give, with the option's name: a value from the environment or the file
    /// is refused as the same value on the command line would be.
    func validate() throws(ValidationError) {
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
        guard maxWatches >= 0 else { throw ValidationError("--max-watches must be 0 (no watches of users and devices) or more, not \(maxWatches)") }
        guard (0...3600).contains(shutdownTimeout) else {
            throw ValidationError("--shutdown-timeout must be from 0 to 3600 seconds, not \(shutdownTimeout)")
        }
        guard (0...ServerConfiguration.largestMinimumSequenceWaitMilliseconds).contains(minSeqWait) else {
            throw ValidationError(
                "--min-seq-wait must be from 0 to \(ServerConfiguration.largestMinimumSequenceWaitMilliseconds) milliseconds, not \(minSeqWait)"
            )
        }
        guard idleTimeout >= 0, idleTimeout <= 86_400 * 365 else {
            throw ValidationError("--idle-timeout must be from 0 (never) to a year in seconds, not \(idleTimeout)")
        }
        guard authTimeout >= 0, authTimeout <= 3_600 else {
            throw ValidationError("--auth-timeout must be from 0 (never) to 3600 seconds, not \(authTimeout)")
        }
        if (tlsCert == nil) != (tlsKey == nil) {
            throw ValidationError("--tls-cert and --tls-key go together: give both, or neither for plain TCP")
        }
        if postgres != nil {
            if dataDirGiven {
                throw ValidationError("--data-dir and --postgres exclude each other: a cluster node keeps its state in the database, not in a data directory (copy one in with entitled-datadir to-postgres)")
            }
            if fsyncGiven {
                throw ValidationError("--fsync does not apply with --postgres: a write is acknowledged once the database committed it")
            }
        }
        guard writeTimeout > 0, writeTimeout <= 600 else {
            throw ValidationError("--write-timeout must be more than 0 and at most 600 seconds, not \(writeTimeout)")
        }
        guard (1...86_400).contains(changeRetention) else {
            throw ValidationError("--change-retention must be from 1 to 86400 seconds, not \(changeRetention)")
        }
        _ = try changeFeedRetention()
        if tcpDisabled && socketPath == nil {
            throw ValidationError("--no-tcp needs --socket PATH: there would be nothing to listen on")
        }
    }

    /// The change feed's retention these settings give (`--feed-retention`, `--feed-retention-changes`).
    func changeFeedRetention() throws(ValidationError) -> FeedRetention {
        guard (FeedRetention.minimumChanges...1_000_000_000).contains(feedRetentionChanges) else {
            throw ValidationError(
                "--feed-retention-changes must be from \(FeedRetention.minimumChanges) to 1000000000, not \(feedRetentionChanges)"
            )
        }
        if feedRetention == "none" { return FeedRetention(ageMilliseconds: nil, changes: feedRetentionChanges) }
        // Fixed lengths only: a retention is a stretch of time, not a calendar date.
        guard let span = TimeSpan(parsing: feedRetention), span.months == 0 else {
            throw ValidationError(
                "--feed-retention must be a duration in s, min, h, d or w (such as 30d), or none, not \"\(feedRetention)\""
            )
        }
        return FeedRetention(ageMilliseconds: span.milliseconds, changes: feedRetentionChanges)
    }
}
