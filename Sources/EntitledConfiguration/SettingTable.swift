import Configuration
import EntitledCore

/// Every setting of one program, and how its environment and configuration file name them: the one table
/// that `SettingsFile`, `SettingsEnvironment`, `SettingOrigins` and `LayeredSettings` read.
///
/// The environment variable of a setting is the program's prefix and the name upper-cased with `-` as `_`
/// (`ENTITLED_DATA_DIR`), which is exactly swift-configuration's `EnvironmentVariablesProvider` encoding of
/// the key `entitled.data-dir`.
public struct SettingTable: Sendable {
    /// Every setting, in the order the program's command declares them. Never `config`: a file naming
    /// another file would make the precedence a puzzle.
    public let keys: [SettingKey]
    /// The first component of every key as the environment provider sees it: `entitled`, `entitled-stores`.
    public let keyPrefix: String
    /// How messages call the keys: "long flag names", "long option names".
    public let keyWording: String
    /// A one-line configuration file, for the message about a file that is not one object.
    public let fileExample: String
    /// Variables of the prefix that belong to other programs sharing an environment (not warned about),
    /// and prefixes of other programs' variables (`ENTITLED_STORES_` beside `ENTITLED_`).
    public let foreignVariables: Set<String>
    public let foreignPrefixes: [String]

    public init(
        keys: [SettingKey], keyPrefix: String, keyWording: String, fileExample: String, foreignVariables: Set<String> = [],
        foreignPrefixes: [String] = []
    ) {
        self.keys = keys
        self.keyPrefix = keyPrefix
        self.keyWording = keyWording
        self.fileExample = fileExample
        self.foreignVariables = foreignVariables
        self.foreignPrefixes = foreignPrefixes
    }

    /// `ENTITLED_`, `ENTITLED_STORES_`.
    public var environmentPrefix: String { Self.variableName(keyPrefix) + "_" }

    /// The variable naming the configuration file, when `--config` is not given: `ENTITLED_CONFIG`.
    public var configurationVariable: String { environmentPrefix + "CONFIG" }

    /// The variable that gives `key`: `ENTITLED_DATA_DIR`.
    public func environmentVariable(of key: SettingKey) -> String {
        environmentPrefix + Self.variableName(key.name)
    }

    /// The setting of this name, if there is one.
    public func named(_ name: String) -> SettingKey? {
        keys.first { $0.name == name }
    }

    /// The known name closest to a mistyped one (at most two edits off, without case), for "did you mean".
    public func closest(to name: String) -> SettingKey? {
        NameSuggestion.closest(to: name, among: keys, by: \.name) { _ in 2 }
    }

    /// The setting a variable of the prefix would name, for "did you mean": `ENTITLED_DATA_DRI` -> `data-dri`.
    func settingName(ofVariable variable: String) -> String {
        String(variable.dropFirst(environmentPrefix.count).lowercased().map { $0 == "_" ? "-" : $0 })
    }

    /// An unknown variable of the prefix as a warning names it: with the closest setting's variable when
    /// there is one, `ENTITLED_DATA_DRI (did you mean ENTITLED_DATA_DIR?)`.
    public func describing(unknownVariable variable: String) -> String {
        guard let closest = closest(to: settingName(ofVariable: variable)) else { return variable }
        return "\(variable) (did you mean \(environmentVariable(of: closest))?)"
    }

    private static func variableName(_ name: String) -> String {
        String(name.uppercased().map { $0 == "-" ? "_" : $0 })
    }
}
