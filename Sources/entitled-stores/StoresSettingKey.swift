import Configuration

/// One setting of `entitled-stores` that the command line, the environment and the configuration file may
/// give: a long option name without its dashes (`state-dir`), which is also its swift-configuration key, and
/// what it takes. `entitled`'s `ConfigurationKey` does the same for the server (see ../entitled/ConfigurationKeys.swift).
///
/// `all` is the one table of these settings, kept beside `ServeCommand`'s options; `StoresSettingsTests`
/// compares it with the options `entitled-stores serve --help` lists.
struct StoresSettingKey: Sendable, Hashable {
    /// What the option takes, which is the type its value is read as from every source.
    enum Kind: Sendable, Hashable {
        /// A whole number: a number, or a string of one, in the file.
        case integer
        /// Text: a string, or a number taken as its text, in the file.
        case text
        /// Secrets: the option repeated, a variable's comma-separated list, a string or a list of strings in the file.
        case secrets
    }

    let name: String
    let kind: Kind

    var configKey: ConfigKey { ConfigKey(name) }

    /// The variable that gives it: `ENTITLED_STORES_` and the name upper-cased, `-` as `_`. It is what
    /// swift-configuration's `EnvironmentVariablesProvider` reads for the key `entitled-stores.<name>`.
    var environmentVariable: String {
        StoresEnvironment.prefix + String(name.uppercased().map { $0 == "-" ? "_" : $0 })
    }

    /// Every setting, in the order `ServeCommand` declares them. Not `config`: a file naming another file
    /// would make the precedence a puzzle.
    static let all: [StoresSettingKey] = {
        let table: [(String, Kind)] = [
            ("listen", .text), ("entitled", .text), ("token-file", .text), ("apple-root-ca", .text), ("apple-bundle-id", .text),
            ("apple-app-id", .integer), ("google-package", .text), ("google-service-account", .text), ("google-push-audience", .text),
            ("google-push-email", .text), ("google-api-url", .text), ("google-token-url", .text), ("google-certs-url", .text),
            ("stripe-secret", .secrets), ("stripe-user-key", .text), ("stripe-grace-days", .integer), ("whop-secret", .secrets),
            ("whop-user-key", .text), ("state-dir", .text), ("unmatched-retry-seconds", .integer), ("idle-timeout", .integer),
            ("max-connections", .integer), ("log-level", .text),
        ]
        return table.map { StoresSettingKey(name: $0.0, kind: $0.1) }
    }()

    static func named(_ name: String) -> StoresSettingKey? {
        all.first { $0.name == name }
    }
}

/// The `ENTITLED_STORES_*` environment, as `entitled`'s `EnvironmentOverrides` takes `ENTITLED_*`: only the
/// settings' variables that are set and not empty reach swift-configuration (`ENTITLED_STORES_LISTEN=` in a
/// unit file means "not set here"), and the others of the prefix are collected to be warned about.
struct StoresEnvironment: Sendable {
    static let prefix = "ENTITLED_STORES_"
    /// The variable naming the configuration file, when `--config` is not given.
    static let configurationVariable = "ENTITLED_STORES_CONFIG"

    /// The settings' variables that are set and not empty, `ENTITLED_STORES_CONFIG` included.
    let variables: [String: String]
    /// `ENTITLED_STORES_*` variables that name no setting, sorted: probably typos.
    let unknownVariables: [String]

    init(environment: [String: String]) {
        let known = Set(StoresSettingKey.all.map(\.environmentVariable) + [Self.configurationVariable])
        variables = environment.filter { known.contains($0.key) && !$0.value.isEmpty }
        unknownVariables = environment.keys.filter { $0.hasPrefix(Self.prefix) && !known.contains($0) }.sorted()
    }

    /// The library's provider of these variables, answering the settings' keys (`listen`, `stripe-secret`).
    var provider: KeyMappingProvider<EnvironmentVariablesProvider> {
        EnvironmentVariablesProvider(environmentVariables: variables).prefixKeys(with: "entitled-stores")
    }
}
