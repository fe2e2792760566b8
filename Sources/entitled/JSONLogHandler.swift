import EntitledCore
import EntitledWire
import Logging
import NIOCore
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
        // Escaped by the wire codec's writer, as responses are.
        var line = ByteBuffer()
        line.writeString("{\"time\":\"" + Timestamp.now().rfc3339 + "\",\"level\":")
        line.writeJSONString(event.level.rawValue)
        line.writeString(",\"label\":")
        line.writeJSONString(label)
        line.writeString(",\"source\":")
        line.writeJSONString(event.source)
        line.writeString(",\"message\":")
        line.writeJSONString(event.message.description)
        if !merged.isEmpty {
            line.writeString(",\"metadata\":{")
            for (index, (key, value)) in merged.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { line.writeString(",") }
                line.writeJSONString(key)
                line.writeString(":")
                line.writeJSONString(value.description)
            }
            line.writeString("}")
        }
        line.writeString("}\n")
        // Straight to descriptor 2 (no stdio buffer to flush), one line per write, under a lock.
        Self.lock.withLock {
            while line.readableBytes > 0 {
                let written = line.withUnsafeReadableBytes { write(2, $0.baseAddress, $0.count) }
                if written < 0 { if errno == EINTR { continue } else { return } }
                line.moveReaderIndex(forwardBy: written)
            }
        }
    }
}
