import EntitledCore
import NIOCore

// Writing JSON straight into the outbound buffer: responses are small, flat and known in advance, so a
// handful of byte writes replaces an encoder and its intermediate values.

extension ByteBuffer {
    /// Writes `string` as a JSON string literal, escaping quotes, backslashes and control characters.
    /// Public for the server's JSON log lines, which escape as responses do.
    public mutating func writeJSONString(_ string: String) {
        var string = string
        _ = string.withUTF8 { utf8 in
            writeWithUnsafeMutableBytes(minimumWritableBytes: UnsafeLineWriter.jsonStringBound(utf8.count)) { memory in
                var out = UnsafeLineWriter(memory)
                out.appendJSONString(UnsafeRawBufferPointer(utf8))
                return out.count
            }
        }
    }

    /// Writes `timestamp` as a quoted RFC 3339 string, or `null`.
    mutating func writeJSONTimestamp(_ timestamp: Timestamp?) {
        guard let timestamp else {
            writeStaticString("null")
            return
        }
        writeStaticString("\"")
        timestamp.withRFC3339Bytes { _ = writeBytes(UnsafeRawBufferPointer($0)) }
        writeStaticString("\"")
    }

    /// Writes an integer in decimal.
    mutating func writeJSONInteger(_ value: Int) {
        writeString(String(value))
    }

    /// Copies a JSON value that a client sent (already validated) without its insignificant whitespace,
    /// so that an echoed `id` never breaks the one-line framing.
    mutating func writeMinifiedJSON(_ raw: ByteBuffer) {
        guard raw.readableBytesView.contains(where: \.isJSONWhitespace) else {
            writeImmutableBuffer(raw)
            return
        }
        var insideString = false
        var escaped = false
        for byte in raw.readableBytesView {
            if insideString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    insideString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                insideString = true
            } else if byte.isJSONWhitespace {
                continue
            }
            writeInteger(byte)
        }
    }
}

extension UInt8 {
    /// Whether this byte is whitespace between JSON tokens (RFC 8259: space, tab, line feed, carriage return).
    var isJSONWhitespace: Bool {
        self == UInt8(ascii: " ") || self == UInt8(ascii: "\t") || self == UInt8(ascii: "\r") || self == UInt8(ascii: "\n")
    }
}
