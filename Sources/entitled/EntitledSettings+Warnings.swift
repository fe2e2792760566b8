import EntitledConfiguration
import Logging

extension EntitledSettings {
    /// One warning line naming every unknown `ENTITLED_*` variable (with the closest setting's variable when
    /// there is one), in the log format and level the settings chose: `--log-format json` stays one JSON
    /// object per line. Logging's bootstrap is `serve()`'s, so the handler is made here directly.
    func warnAboutUnknownVariables() {
        guard !unknownVariables.isEmpty else { return }
        let (level, format) = (logLevel, logFormat)
        let logger = Logger(label: "entitled") { label in format.makeHandler(label: label, level: level) }
        let described = unknownVariables.map(SettingTable.entitled.describing(unknownVariable:))
        logger.warning(
            "ignoring unknown environment variables: \(described.joined(separator: ", ")); the settings are ENTITLED_ and a long flag name, such as ENTITLED_DATA_DIR"
        )
    }
}
