import Configuration

/// A program's settings as swift-configuration layers them: the command line, then the environment
/// (`SettingsEnvironment`), then the configuration file (`--config`, else the program's `..._CONFIG`
/// variable; `SettingsFile`), then the program's defaults. Both `entitled` and `entitled-stores` start here,
/// so both resolve, refuse and explain their settings the same way.
public struct LayeredSettings: Sendable {
    /// Reads a setting from the first source that gives it; every lookup is reported to `origins`.
    public let reader: ConfigReader
    /// Where each value came from, for a note under an error about a value the operator did not type.
    public let origins: SettingOrigins
    public let environment: SettingsEnvironment
    /// The configuration file read, if any.
    public let configurationPath: String?
    public let table: SettingTable

    /// - Parameter commandLine: what the command line's parser read, by key: the first of the sources.
    public init(table: SettingTable, commandLine: [AbsoluteConfigKey: ConfigValue], environment: [String: String]) throws(SettingsError) {
        let overrides = try SettingsEnvironment(environment: environment, table: table)
        let typed = InMemoryProvider(name: SettingOrigins.commandLineName, values: commandLine)
        // Which file: `--config`, else the variable. The file is not read before this: with `--config`
        // given, a broken file named by the variable must not matter.
        let path = ConfigReader(providers: [typed, overrides.provider]).string(forKey: "config")
        var providers: [any ConfigProvider] = [typed, overrides.provider]
        var fileProvider: (name: String, origin: String)?
        if let path {
            let provider = try SettingsFile(path: path, table: table).provider
            providers.append(provider)
            fileProvider = (provider.providerName, SettingsFile.providerName(path: path))
        }
        let origins = SettingOrigins(commandLineProvider: typed.providerName, fileProvider: fileProvider, table: table)
        self.reader = ConfigReader(providers: providers, accessReporter: origins)
        self.origins = origins
        self.environment = overrides
        self.configurationPath = path
        self.table = table
    }

    // MARK: Typed reads, by setting name

    /// The setting's text, from the first source that gives it.
    public func text(_ name: String) -> String? {
        reader.string(forKey: key(name).configKey)
    }

    /// Whether the flag is set; an environment variable that is no boolean was refused on reading.
    public func flag(_ name: String) throws(SettingsError) -> Bool {
        let value = reader.bool(forKey: key(name).configKey)
        try check(name, expected: "true, false, 1 or 0")
        return value ?? false
    }

    public func integer(_ name: String) throws(SettingsError) -> Int? {
        let value = reader.int(forKey: key(name).configKey)
        try check(name, expected: "a whole number")
        return value
    }

    public func number(_ name: String) throws(SettingsError) -> Double? {
        let value = reader.double(forKey: key(name).configKey)
        try check(name, expected: "a number")
        return value
    }

    /// Secrets: the command line's (the option repeated), the variable's (comma-separated), the file's (one
    /// or a list); empty ones dropped.
    public func secrets(_ name: String) -> [String] {
        (reader.stringArray(forKey: key(name).configKey, isSecret: true) ?? []).filter { !$0.isEmpty }
    }

    /// The setting of this name; a name the table lacks is the program's mistake, not the operator's.
    public func key(_ name: String) -> SettingKey {
        guard let key = table.named(name) else { preconditionFailure("no setting is named \(name)") }
        return key
    }

    /// Throws when the last read of `name` found a value of the wrong type. Only the environment's text
    /// is converted on reading: the command line's parser and the file's reader typed the others.
    private func check(_ name: String, expected: String) throws(SettingsError) {
        let key = key(name)
        guard case .unconvertible = origins.outcome(of: key) else { return }
        let variable = table.environmentVariable(of: key)
        throw .invalidEnvironmentNumber(variable: variable, value: environment.variables[variable] ?? "", expected: expected)
    }
}
