import EntitledCore
import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `--log-format json`: one JSON object per line on standard error, for log collectors:
/// `{"time":"2026-11-22T10:04:07.123Z","level":"info","label":"entitled","source":"EntitledServer","message":"...","metadata":{"key":"value"}}`.
/// Metadata values are written as strings (lists and dictionaries in their swift-log text form).
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    /// One line at a time, whole, whichever thread logs.
    private static let lock = NIOLock()

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        var line = "{\"time\":\"" + Timestamp.now().rfc3339 + "\",\"level\":"
        Self.appendJSONString(event.level.rawValue, to: &line)
        line += ",\"label\":"
        Self.appendJSONString(label, to: &line)
        line += ",\"source\":"
        Self.appendJSONString(event.source, to: &line)
        line += ",\"message\":"
        Self.appendJSONString(event.message.description, to: &line)
        if !merged.isEmpty {
            line += ",\"metadata\":{"
            for (index, (key, value)) in merged.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { line += "," }
                Self.appendJSONString(key, to: &line)
                line += ":"
                Self.appendJSONString(value.description, to: &line)
            }
            line += "}"
        }
        line += "}\n"
        // Straight to descriptor 2 (no stdio buffer to flush), one line per write, under a lock.
        Self.lock.withLock {
            var bytes = Array(line.utf8)[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
                if written < 0 { if errno == EINTR { continue } else { return } }
                bytes = bytes.dropFirst(written)
            }
        }
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped.
    static func appendJSONString(_ text: String, to line: inout String) {
        line += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": line += "\\\""
            case "\\": line += "\\\\"
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                line += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: line.unicodeScalars.append(scalar)
            }
        }
        line += "\""
    }
}

/// How log lines are written (`--log-format`).
enum LogFormat: String, CaseIterable {
    /// swift-log's standard lines, for people.
    case text
    /// One JSON object per line, for log collectors.
    case json
}
