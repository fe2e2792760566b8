import ArgumentParser
import Configuration
import EntitledConfiguration
import EntitledStorage
import Logging

extension EntitledSettings {
    /// Resolves every setting: the command line's options (`commandLine`, what the parser read), then the
    /// `ENTITLED_*` variables of `environment`, then the configuration file (`--config`, else
    /// `ENTITLED_CONFIG`), then the built-in default. swift-configuration layers the three sources (a
    /// `ConfigReader` over an `InMemoryProvider`, its `EnvironmentVariablesProvider` and the file's values)
    /// and reports which one gave each value, so that a refused value names where it came from.
    ///
    /// Throws what stops the start with exit status 64, as a bad flag does: a broken file, a flag variable
    /// that is no boolean, a value that is not of its option's type or range.
    init(commandLine: [AbsoluteConfigKey: ConfigValue], environment: [String: String]) throws(ValidationError) {
        let layered: LayeredSettings
        do throws(SettingsError) {
            layered = try LayeredSettings(table: .entitled, commandLine: commandLine, environment: environment)
        } catch {
            throw ValidationError(error.message)
        }
        let sources = layered
        let path = layered.configurationPath

        self.init()
        do throws(SettingsError) {
            config = path
            host = sources.text("host") ?? host
            port = try sources.integer("port") ?? port
            tcpDisabled = try sources.flag("no-tcp")
            socketPath = sources.text("socket")
            let givenDataDir = sources.text("data-dir")
            dataDir = givenDataDir ?? dataDir
            dataDirGiven = givenDataDir != nil
            snapshotInterval = try sources.integer("snapshot-interval") ?? snapshotInterval
            maxLineLength = try sources.integer("max-line-length") ?? maxLineLength
            eventLoops = try sources.integer("event-loops") ?? eventLoops
            busyPoll = try sources.integer("busy-poll") ?? busyPoll
            maxConnections = try sources.integer("max-connections") ?? maxConnections
            idleTimeout = try sources.number("idle-timeout") ?? idleTimeout
            authTimeout = try sources.number("auth-timeout") ?? authTimeout
            maxRequestsPerTurn = try sources.integer("max-requests-per-turn") ?? maxRequestsPerTurn
            maxWatches = try sources.integer("max-watches") ?? maxWatches
            shutdownTimeout = try sources.number("shutdown-timeout") ?? shutdownTimeout
            minSeqWait = try sources.integer("min-seq-wait") ?? minSeqWait
            tlsCert = sources.text("tls-cert")
            tlsKey = sources.text("tls-key")
            authFile = sources.text("auth")
            insecureNoAuth = try sources.flag("insecure-no-auth")
            noIoUring = try sources.flag("no-io-uring")
            socketMode = sources.text("socket-mode") ?? socketMode
            metricsPort = try sources.integer("metrics-port")
            metricsHost = sources.text("metrics-host") ?? metricsHost
            postgres = sources.text("postgres")
            nodeName = sources.text("node-name")
            writeTimeout = try sources.number("write-timeout") ?? writeTimeout
            changeRetention = try sources.integer("change-retention") ?? changeRetention
            feedRetention = sources.text("feed-retention") ?? feedRetention
            feedRetentionChanges = try sources.integer("feed-retention-changes") ?? feedRetentionChanges
        } catch {
            throw ValidationError(error.message)
        }
        do throws(ValidationError) {
            let givenFsync: FsyncPolicy? = try sources.choice("fsync")
            fsync = givenFsync ?? fsync
            fsyncGiven = givenFsync != nil
            transferRule = try sources.choice("transfer-rule") ?? transferRule
            unsyncedReads = try sources.choice("unsynced-reads") ?? unsyncedReads
            logLevel = try sources.choice("log-level") ?? logLevel
            logFormat = try sources.choice("log-format") ?? logFormat
            try validate()
        } catch {
            // A value the operator did not type: say where it is.
            guard let explanation = layered.origins.explanation(of: error.message) else { throw error }
            throw ValidationError("\(error.message)\nNote: \(explanation).")
        }
        unknownVariables = layered.environment.unknownVariables
    }
}

extension LayeredSettings {
    /// One of the option's values (`--fsync always`), refused as the command line's parser refuses it.
    func choice<Value: ExpressibleByArgument>(_ name: String) throws(ValidationError) -> Value? {
        guard let text = text(name) else { return nil }
        guard let value = Value(argument: text) else {
            let values = Value.allValueStrings.joined(separator: ", ")
            throw ValidationError("the value '\(text)' is invalid for \(key(name).option): it is one of \(values)")
        }
        return value
    }
}
