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
        // The quotes and the time written in place, in one reservation.
        writeWithUnsafeMutableBytes(minimumWritableBytes: Timestamp.maximumRFC3339Length + 2) { memory in
            memory[0] = UInt8(ascii: "\"")
            let count = timestamp.writeRFC3339(into: UnsafeMutableRawBufferPointer(rebasing: memory[1..<(1 + Timestamp.maximumRFC3339Length)]))
            memory[1 + count] = UInt8(ascii: "\"")
            return count + 2
        }
    }

    /// Writes an integer in decimal.
    mutating func writeJSONInteger(_ value: Int) {
        writeDecimal(UInt64(value.magnitude), negative: value < 0)
    }

    /// Writes an unsigned integer (a change's sequence number) in decimal.
    mutating func writeJSONInteger(_ value: UInt64) {
        writeDecimal(value, negative: false)
    }

    /// Written in place with `UnsafeLineWriter`'s digits: `String(value)`, as this was written before,
    /// made a string of its own for every write's `seq` (about 0.5% of a grant's CPU in `perf`).
    private mutating func writeDecimal(_ magnitude: UInt64, negative: Bool) {
        writeWithUnsafeMutableBytes(minimumWritableBytes: 21) { memory in
            var writer = UnsafeLineWriter(memory)
            if negative { writer.append("-") }
            writer.appendDecimal(magnitude)
            return writer.count
        }
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
