import Configuration

/// The `ENTITLED_*` environment variables: `ENTITLED_` and the long flag name upper-cased with `-` as `_`
/// (`ENTITLED_DATA_DIR`), for containers and unit files where a file or flags are awkward. swift-configuration's
/// `EnvironmentVariablesProvider` reads them (its encoding of the key `entitled.data-dir` is exactly that name);
/// this type decides which variables it is given, and what it does not do itself.
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
struct EnvironmentOverrides: Sendable {
    static let prefix = "ENTITLED_"
    /// The variable naming the configuration file, when `--config` is not given.
    static let configurationVariable = "ENTITLED_CONFIG"
    /// Variables of the prefix that belong to other programs and are passed on to `entitled` by accident of
    /// a shared environment: `entitlectl`'s token, and the binary the Python client's tests start.
    static let variablesOfOtherPrograms: Set<String> = ["ENTITLED_TOKEN", "ENTITLED_BINARY"]
    /// The prefix of `entitled-stores`' variables, which are not `entitled`'s typos.
    static let receiverPrefix = "ENTITLED_STORES_"
    /// The first component of every key as the environment provider sees it: `entitled.port` is `ENTITLED_PORT`.
    static let keyPrefix: ConfigKey = "entitled"

    /// The settings' variables that are set and not empty, `ENTITLED_CONFIG` included.
    let variables: [String: String]
    /// `ENTITLED_*` variables that are no setting, sorted: probably typos.
    let unknownVariables: [String]

    init(environment: [String: String]) throws(ConfigurationError) {
        var variables: [String: String] = [:]
        for key in ConfigurationKey.all {
            guard let text = environment[key.environmentVariable], !text.isEmpty else { continue }
            if key.kind == .flag, !["true", "false", "1", "0"].contains(text.lowercased()) {
                throw .invalidEnvironmentFlag(variable: key.environmentVariable, value: text)
            }
            variables[key.environmentVariable] = text
        }
        if let file = environment[Self.configurationVariable], !file.isEmpty {
            variables[Self.configurationVariable] = file
        }
        self.variables = variables
        let known = Set(ConfigurationKey.all.map(\.environmentVariable))
            .union(Self.variablesOfOtherPrograms)
            .union([Self.configurationVariable])
        // `entitled-stores`' own variables (`ENTITLED_STORES_*`) share the prefix and a unit's environment.
        unknownVariables = environment.keys.filter {
            $0.hasPrefix(Self.prefix) && !$0.hasPrefix(Self.receiverPrefix) && !known.contains($0)
        }.sorted()
    }

    /// The library's provider of these variables, answering the settings' keys (`port`, `data-dir`).
    var provider: KeyMappingProvider<EnvironmentVariablesProvider> {
        EnvironmentVariablesProvider(environmentVariables: variables).prefixKeys(with: Self.keyPrefix)
    }
}
