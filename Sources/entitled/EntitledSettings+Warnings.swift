import Logging

extension EntitledSettings {
    /// One warning line naming every unknown `ENTITLED_*` variable (with the closest setting's variable when
    /// there is one), in the log format and level the settings chose: `--log-format json` stays one JSON
    /// object per line. Logging's bootstrap is `serve()`'s, so the handler is made here directly.
    func warnAboutUnknownVariables() {
        guard !unknownVariables.isEmpty else { return }
        let (level, format) = (logLevel, logFormat)
        let logger = Logger(label: "entitled") { label in format.makeHandler(label: label, level: level) }
        let described = unknownVariables.map { variable in
            let name = String(variable.dropFirst(EnvironmentOverrides.prefix.count).lowercased().map { $0 == "_" ? "-" : $0 })
            guard let closest = ConfigurationKey.closest(to: name) else { return variable }
            return "\(variable) (did you mean \(closest.environmentVariable)?)"
        }
        logger.warning(
            "ignoring unknown environment variables: \(described.joined(separator: ", ")); the settings are ENTITLED_ and a long flag name, such as ENTITLED_DATA_DIR"
        )
    }
}
