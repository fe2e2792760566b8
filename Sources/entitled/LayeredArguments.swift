/// The command line `EntitledCommand` parses: the configuration file's settings and then the environment's,
/// as synthesized arguments, before the real ones.
///
/// The parser keeps the last value of an option given twice, so placing them first gives the precedence
/// command line > environment > file > built-in default without a second model of the settings: every
/// value, wherever it came from, is checked by the same parser and `validate()` as the flag.
/// A flag cannot be unset by a later argument, so the file and the environment are merged here first: an
/// environment flag set to false drops the file's.
struct LayeredArguments: Sendable {
    /// What the parser gets.
    let arguments: [String]
    /// Where each synthesized option came from, by option (`--port`: `ENTITLED_PORT`), to explain a value
    /// the parser refuses although the command line does not show it.
    let origins: [String: String]
    /// `ENTITLED_*` variables that are no setting.
    let unknownVariables: [String]

    /// Options after which the parser only prints and exits: the file and the environment are not read, so
    /// that `entitled --help` works even when they are wrong.
    private static let informationOptions: Set<String> = ["-h", "--help", "--version", "--experimental-dump-help"]

    init(commandLine: [String], environment: [String: String]) throws(ConfigurationError) {
        if commandLine.contains(where: { Self.informationOptions.contains($0) || $0.hasPrefix("--generate-completion-script") }) {
            self.init(arguments: commandLine, origins: [:], unknownVariables: [])
            return
        }
        let given = Self.configurationPath(in: commandLine)
        let fromEnvironment = environment[EnvironmentOverrides.configurationVariable].flatMap { $0.isEmpty ? nil : $0 }
        let path = given ?? fromEnvironment
        let file = try path.map { path throws(ConfigurationError) in try ConfigurationFile(path: path) }
        let overrides = try EnvironmentOverrides(environment: environment)

        var merged: [ConfigurationKey: ConfigurationSetting] = [:]
        for setting in (file?.settings ?? []) + overrides.settings {
            merged[setting.key] = setting  // the environment's, read second, replaces the file's
        }
        var synthesized: [String] = []
        var origins: [String: String] = [:]
        // Named on the parser's command line too, so that the start log line shows the file in effect.
        if given == nil, let fromEnvironment {
            synthesized.append("--config=\(fromEnvironment)")
            origins["--config"] = EnvironmentOverrides.configurationVariable
        }
        for key in ConfigurationKey.all {
            guard let setting = merged[key], !setting.arguments.isEmpty else { continue }
            synthesized += setting.arguments
            // Only where the command line does not give the option too: then its value is the one parsed.
            if !commandLine.contains(where: { $0 == key.option || $0.hasPrefix(key.option + "=") }) {
                origins[key.option] = setting.origin
            }
        }
        self.init(
            arguments: synthesized + commandLine,
            origins: origins,
            unknownVariables: overrides.unknownVariables
        )
    }

    private init(arguments: [String], origins: [String: String], unknownVariables: [String]) {
        self.arguments = arguments
        self.origins = origins
        self.unknownVariables = unknownVariables
    }

    /// The value of the last `--config FILE` or `--config=FILE` on the command line (the parser keeps the last
    /// too), before a `--` that ends the options. `nil` when there is none, or when `--config` ends the line
    /// without its value: the parser then says what is missing.
    private static func configurationPath(in commandLine: [String]) -> String? {
        var path: String?
        var index = commandLine.startIndex
        while index < commandLine.endIndex {
            let argument = commandLine[index]
            if argument == "--" { break }
            if argument == "--config" {
                let next = commandLine.index(after: index)
                path = next < commandLine.endIndex ? commandLine[next] : nil
                index = next
            } else if argument.hasPrefix("--config=") {
                path = String(argument.dropFirst("--config=".count))
            }
            index = commandLine.index(after: index)
        }
        return path
    }

    /// The synthesized options a parser message names, with their origins: `--port came from ENTITLED_PORT`.
    func explanation(ofParserMessage message: String) -> String? {
        let named = origins.keys.sorted().filter { option in
            // The option followed by what ends its name in the parser's messages, so `--socket` does not
            // match `--socket-mode`.
            [" ", "'", "=", ":", ",", ".", "\n"].contains { message.contains(option + $0) } || message.hasSuffix(option)
        }
        guard !named.isEmpty else { return nil }
        return named.map { "\($0) came from \(origins[$0] ?? "")" }.joined(separator: "; ")
    }
}
