import Logging
import NIOConcurrencyHelpers

/// Every log line a server wrote, message and metadata as one string each, for tests of what is logged
/// (and what never is: a token).
final class RecordedLogs: Sendable {
    private let lines = NIOLockedValueBox<[String]>([])

    var all: [String] { lines.withLockedValue { $0 } }

    func append(_ line: String) { lines.withLockedValue { $0.append(line) } }
}

/// A swift-log handler that writes into `RecordedLogs`.
struct RecordingLogHandler: LogHandler {
    let logs: RecordedLogs
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    init(_ logs: RecordedLogs) { self.logs = logs }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let rendered = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        logs.append("\(event.level) \(event.message) \(rendered)")
    }
}
