import Configuration

/// The program's environment variables: its prefix and the long option name upper-cased with `-` as `_`
/// (`ENTITLED_DATA_DIR`, `ENTITLED_STORES_LISTEN`), for containers and unit files where a file or options are
/// awkward. swift-configuration's `EnvironmentVariablesProvider` reads them (its encoding of the key
/// `entitled.data-dir` is exactly that name); this type decides which variables it is given, and what it
/// does not do itself.
///
/// Kept by hand on top of the library, which has no notion of a variable that is no setting and reads a
/// flag as `yes`/`no` too:
/// - an empty variable counts as unset, as `ENTITLED_TOKEN` does for `entitlectl` (`ENTITLED_PORT=` in a unit
///   file means "not set here"), where the library would read an empty text;
/// - variables of the prefix that are no setting are collected, not refused: the caller warns about them,
///   since a typo must not go unnoticed but should not stop a server either;
/// - a flag's variable is `true`, `false`, `1` or `0` (any case), as documented, or the start stops.
/// Only the settings' variables reach the provider: `entitlectl`'s `ENTITLED_TOKEN`, a secret, never enters
/// the configuration reader, so nothing it reports can show it.
public struct SettingsEnvironment: Sendable {
    /// The settings' variables that are set and not empty, the configuration file's included.
    public let variables: [String: String]
    /// Variables of the prefix that are no setting, sorted: probably typos.
    public let unknownVariables: [String]
    private let keyPrefix: String

    public init(environment: [String: String], table: SettingTable) throws(SettingsError) {
        var variables: [String: String] = [:]
        for key in table.keys {
            let variable = table.environmentVariable(of: key)
            guard let text = environment[variable], !text.isEmpty else { continue }
            if key.kind == .flag, !["true", "false", "1", "0"].contains(text.lowercased()) {
                throw .invalidEnvironmentFlag(variable: variable, value: text)
            }
            variables[variable] = text
        }
        if let file = environment[table.configurationVariable], !file.isEmpty {
            variables[table.configurationVariable] = file
        }
        self.variables = variables
        let known = Set(table.keys.map(table.environmentVariable(of:))).union(table.foreignVariables).union([table.configurationVariable])
        unknownVariables = environment.keys.filter { variable in
            variable.hasPrefix(table.environmentPrefix) && !known.contains(variable)
                && !table.foreignPrefixes.contains { variable.hasPrefix($0) }
        }.sorted()
        keyPrefix = table.keyPrefix
    }

    /// The library's provider of these variables, answering the settings' keys (`port`, `data-dir`).
    public var provider: KeyMappingProvider<EnvironmentVariablesProvider> {
        EnvironmentVariablesProvider(environmentVariables: variables).prefixKeys(with: ConfigKey(keyPrefix))
    }
}
