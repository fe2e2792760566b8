import Logging

/// How log lines are written (`--log-format`).
enum LogFormat: String, CaseIterable {
    /// swift-log's standard lines, for people.
    case text
    /// One JSON object per line, for log collectors.
    case json

    /// A handler writing lines of this format at `level` and above to standard error.
    func makeHandler(label: String, level: Logger.Level) -> any LogHandler {
        switch self {
        case .text:
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        case .json:
            var handler = JSONLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
