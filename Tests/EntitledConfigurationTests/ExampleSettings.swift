import Configuration
import EntitledConfiguration
import EntitledTestSupport
import Testing

/// A program's settings as a test needs them: one of each kind, under the prefix `entitled`, with the
/// variables of `entitled-stores` (`ENTITLED_STORES_`) and `entitlectl`'s token belonging to others.
enum ExampleSettings {
    static let table = SettingTable(
        keys: [
            SettingKey(name: "port", kind: .integer),
            SettingKey(name: "data-dir", kind: .text),
            SettingKey(name: "socket-mode", kind: .text),
            SettingKey(name: "insecure-no-auth", kind: .flag),
            SettingKey(name: "idle-timeout", kind: .number),
            SettingKey(name: "webhook-secret", kind: .secrets),
        ],
        keyPrefix: "entitled", keyWording: "long flag names", fileExample: #"{"port": 7117}"#,
        foreignVariables: ["ENTITLED_TOKEN"], foreignPrefixes: ["ENTITLED_STORES_"]
    )

    /// The command line's values as the parser hands them over.
    static func commandLine(_ values: [String: ConfigContent]) -> [AbsoluteConfigKey: ConfigValue] {
        Dictionary(uniqueKeysWithValues: values.map { (AbsoluteConfigKey(ConfigKey($0.key)), ConfigValue($0.value, isSecret: false)) })
    }

    /// A configuration file of `text` in `directory`, and its path.
    static func file(_ text: String, in directory: TemporaryDirectory, named name: String = "entitled.json") throws -> String {
        let path = directory.path + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The error `body` throws, if it throws one (an error of another type fails the test).
    static func error(_ body: () throws -> Void) -> SettingsError? {
        do {
            try body()
            return nil
        } catch let error as SettingsError {
            return error
        } catch {
            Issue.record("not a SettingsError: \(error)")
            return nil
        }
    }
}
