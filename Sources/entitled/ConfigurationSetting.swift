/// One setting given by the configuration file or the environment, and where it came from, on its way to
/// becoming a synthesized command-line argument.
struct ConfigurationSetting: Sendable, Hashable {
    /// A flag set or left unset, or an option's value as text (the command line's parser checks it).
    enum Value: Sendable, Hashable {
        case flag(Bool)
        case text(String)
    }

    let key: ConfigurationKey
    let value: Value
    /// Where it came from, as an error message names it: `ENTITLED_PORT`, `the configuration file /etc/entitled.json`.
    let origin: String

    /// The command-line arguments that give the same setting: none for an unset flag. A value is joined to
    /// its option with `=` so that one starting with a dash (`--busy-poll=-1`) is not read as an option.
    var arguments: [String] {
        switch value {
        case .flag(let isSet): isSet ? [key.option] : []
        case .text(let text): ["\(key.option)=\(text)"]
        }
    }
}
