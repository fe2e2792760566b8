import Configuration
import EntitledCore

/// One setting of `entitled` that the configuration file and the environment may give: a long flag name of
/// the command line without its dashes (`data-dir`), and what it takes. Its name is its swift-configuration
/// key too: the environment variable `ENTITLED_DATA_DIR` is the library's encoding of `entitled.data-dir`.
///
/// `all` is the one table of these settings. It is kept by hand beside `EntitledCommand`'s options, and
/// `ConfigurationFileTests` compares it with the options `entitled --help` lists, so an option added
/// without its key here fails the tests.
struct ConfigurationKey: Sendable, Hashable {
    /// What the option takes, which is the type its value is read as from every source.
    enum Kind: Sendable, Hashable {
        /// Stands alone (`--no-tcp`): `true` in the file (`true`/`false`/`1`/`0` in the environment).
        case flag
        /// A whole number (`--port 7117`): a number, or a string of one, in the file.
        case integer
        /// A number of seconds that may have a fraction (`--idle-timeout 2.5`).
        case number
        /// Text (`--data-dir`, `--fsync`): a string, or a number taken as its text (`"socket-mode": 660`).
        case text
    }

    /// The long flag name without its dashes, as written in the file: `data-dir`.
    let name: String
    let kind: Kind

    /// The option as written on the command line: `--data-dir`.
    var option: String { "--" + name }

    /// The swift-configuration key the setting is read with.
    var configKey: ConfigKey { ConfigKey(name) }

    /// The environment variable that gives it: `ENTITLED_DATA_DIR`.
    var environmentVariable: String {
        EnvironmentOverrides.prefix + String(name.uppercased().map { $0 == "-" ? "_" : $0 })
    }

    /// Every setting, in the order `EntitledCommand` declares them.
    /// Not `config`: a file naming another file would make the precedence a puzzle.
    static let all: [ConfigurationKey] = [
        .init(name: "host", kind: .text),
        .init(name: "port", kind: .integer),
        .init(name: "no-tcp", kind: .flag),
        .init(name: "socket", kind: .text),
        .init(name: "data-dir", kind: .text),
        .init(name: "fsync", kind: .text),
        .init(name: "transfer-rule", kind: .text),
        .init(name: "unsynced-reads", kind: .text),
        .init(name: "snapshot-interval", kind: .integer),
        .init(name: "max-line-length", kind: .integer),
        .init(name: "event-loops", kind: .integer),
        .init(name: "busy-poll", kind: .integer),
        .init(name: "log-level", kind: .text),
        .init(name: "log-format", kind: .text),
        .init(name: "max-connections", kind: .integer),
        .init(name: "idle-timeout", kind: .number),
        .init(name: "auth-timeout", kind: .number),
        .init(name: "max-requests-per-turn", kind: .integer),
        .init(name: "shutdown-timeout", kind: .number),
        .init(name: "min-seq-wait", kind: .integer),
        .init(name: "tls-cert", kind: .text),
        .init(name: "tls-key", kind: .text),
        .init(name: "auth", kind: .text),
        .init(name: "insecure-no-auth", kind: .flag),
        .init(name: "no-io-uring", kind: .flag),
        .init(name: "socket-mode", kind: .text),
        .init(name: "metrics-port", kind: .integer),
        .init(name: "metrics-host", kind: .text),
        .init(name: "postgres", kind: .text),
        .init(name: "node-name", kind: .text),
        .init(name: "write-timeout", kind: .number),
        .init(name: "change-retention", kind: .integer),
    ]

    /// The setting of this name, if there is one.
    static func named(_ name: String) -> ConfigurationKey? {
        all.first { $0.name == name }
    }

    /// The known name closest to a mistyped one (at most two edits off, without case), for "did you mean".
    static func closest(to name: String) -> ConfigurationKey? {
        NameSuggestion.closest(to: name, among: all, by: \.name) { _ in 2 }
    }
}
