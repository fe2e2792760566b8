/// The settings of the `ENTITLED_*` environment variables: `ENTITLED_` and the long flag name upper-cased
/// with `-` as `_` (`ENTITLED_DATA_DIR`), for containers and unit files where a file or flags are awkward.
///
/// An empty variable counts as unset, as `ENTITLED_TOKEN` does for `entitlectl` (`ENTITLED_PORT=` in a unit
/// file means "not set here"). Variables of this prefix that are no setting are collected, not refused:
/// the caller warns about them, since a typo must not go unnoticed but should not stop a server either.
struct EnvironmentOverrides: Sendable {
    static let prefix = "ENTITLED_"
    /// The variable naming the configuration file, when `--config` is not given.
    static let configurationVariable = "ENTITLED_CONFIG"
    /// Variables of the prefix that belong to other programs and are passed on to `entitled` by accident of
    /// a shared environment: `entitlectl`'s token, and the binary the Python client's tests start.
    static let variablesOfOtherPrograms: Set<String> = ["ENTITLED_TOKEN", "ENTITLED_BINARY"]

    /// The settings, in `ConfigurationKey.all`'s order; flags set to `false` included, so they can undo the file's.
    let settings: [ConfigurationSetting]
    /// `ENTITLED_*` variables that are no setting, sorted: probably typos.
    let unknownVariables: [String]

    init(environment: [String: String]) throws(ConfigurationError) {
        var settings: [ConfigurationSetting] = []
        for key in ConfigurationKey.all {
            guard let text = environment[key.environmentVariable], !text.isEmpty else { continue }
            let variable = key.environmentVariable
            switch key.kind {
            case .flag:
                switch text.lowercased() {
                case "true", "1": settings.append(.init(key: key, value: .flag(true), origin: variable))
                case "false", "0": settings.append(.init(key: key, value: .flag(false), origin: variable))
                default: throw .invalidEnvironmentFlag(variable: variable, value: text)
                }
            case .value:
                settings.append(.init(key: key, value: .text(text), origin: variable))
            }
        }
        self.settings = settings
        let known = Set(ConfigurationKey.all.map(\.environmentVariable))
            .union(Self.variablesOfOtherPrograms)
            .union([Self.configurationVariable])
        unknownVariables = environment.keys.filter { $0.hasPrefix(Self.prefix) && !known.contains($0) }.sorted()
    }
}
