import Configuration

/// One setting a program's command line, environment and configuration file may give: a long option name
/// without its dashes (`data-dir`), which is also its swift-configuration key, and what it takes.
///
/// A program lists its settings in one `SettingTable`; `entitled` and `entitled-stores` each keep theirs
/// beside their command's options, and a test compares each table with the options `--help` lists.
public struct SettingKey: Sendable, Hashable {
    /// What the option takes, which is the type its value is read as from every source.
    public enum Kind: Sendable, Hashable {
        /// Stands alone (`--no-tcp`): `true` in the file (`true`/`false`/`1`/`0` in the environment).
        case flag
        /// A whole number (`--port 7117`): a number, or a string of one, in the file.
        case integer
        /// A number that may have a fraction (`--idle-timeout 2.5`).
        case number
        /// Text (`--data-dir`, `--fsync`): a string, or a number taken as its text (`"socket-mode": 660`).
        case text
        /// Secrets: the option repeated, a variable's comma-separated list, a string or a list of strings
        /// in the file; never shown in what the configuration reader reports.
        case secrets
    }

    /// The long option name without its dashes, as written in the file: `data-dir`.
    public let name: String
    public let kind: Kind

    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// The option as written on the command line: `--data-dir`.
    public var option: String { "--" + name }

    /// The swift-configuration key the setting is read with.
    public var configKey: ConfigKey { ConfigKey(name) }
}
