import EntitledCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Appends bytes to memory reserved beforehand, with one bounds comparison an append.
///
/// Written by hand for the hot answers: `ByteBuffer.writeStaticString` checks capacity, uniqueness and
/// exclusive access on every call, about 170 instructions in callgrind, and a check answer took four
/// calls, a membership forty. Reserving once and copying here costs a few dozen. The caller reserves
/// enough for everything it appends (checked: running past it stops the process rather than
/// corrupt memory): see `jsonStringBound`.
struct UnsafeLineWriter {
    private let memory: UnsafeMutableRawBufferPointer
    /// How many bytes have been appended.
    private(set) var count = 0

    init(_ memory: UnsafeMutableRawBufferPointer) {
        self.memory = memory
    }

    @inline(__always)
    mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        precondition(count + bytes.count <= memory.count, "UnsafeLineWriter: more bytes than were reserved")
        guard let source = bytes.baseAddress, let base = memory.baseAddress else { return }
        memcpy(base + count, source, bytes.count)
        count += bytes.count
    }

    /// The most bytes `appendJSONString` writes for `byteCount` bytes of text: the quotes, and six bytes
    /// (`\u00XX`) for every byte at worst.
    static func jsonStringBound(_ byteCount: Int) -> Int {
        2 + 6 * byteCount
    }

    /// Appends UTF-8 text as a JSON string literal, escaping quotes, backslashes and control characters
    /// (everything else, non-ASCII included, is valid as it is).
    mutating func appendJSONString(_ text: UnsafeRawBufferPointer) {
        append("\"")
        var plainStart = 0
        var index = 0
        let count = text.count
        while index < count {
            // Eight bytes at a time while none needs escaping (nor is non-ASCII, which the word test also
            // stops at): a membership answer's strings were a byte-at-a-time loop of about 1,000
            // instructions a grant.
            if index + 8 <= count,
                !JSONScanner.hasSpecialByte(UInt64(littleEndian: text.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
            {
                index += 8
                continue
            }
            let byte = text[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                append(UnsafeRawBufferPointer(rebasing: text[plainStart..<index]))
                appendEscaped(byte)
                plainStart = index + 1
            }
            index += 1
        }
        append(UnsafeRawBufferPointer(rebasing: text[plainStart...]))
        append("\"")
    }

    /// Appends `text` as a JSON string literal.
    mutating func appendJSONString(_ text: String) {
        var text = text
        text.withUTF8 { appendJSONString(UnsafeRawBufferPointer($0)) }
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): append("\\\"")
        case UInt8(ascii: "\\"): append("\\\\")
        case 0x0A: append("\\n")
        case 0x0D: append("\\r")
        case 0x09: append("\\t")
        case 0x08: append("\\b")
        case 0x0C: append("\\f")
        default:
            let hex: StaticString = "0123456789abcdef"
            append("\\u00")
            appendByte(hex.utf8Start[Int(byte >> 4)])
            appendByte(hex.utf8Start[Int(byte & 0x0F)])
        }
    }

    @inline(__always)
    mutating func appendByte(_ byte: UInt8) {
        precondition(count < memory.count, "UnsafeLineWriter: more bytes than were reserved")
        memory[count] = byte
        count += 1
    }

    /// Appends `timestamp` as a quoted UTC RFC 3339 string (at most `timestampBound` bytes).
    mutating func appendTimestamp(_ timestamp: Timestamp) {
        append("\"")
        precondition(count + Timestamp.maximumRFC3339Length <= memory.count, "UnsafeLineWriter: more bytes than were reserved")
        count += timestamp.writeRFC3339(into: UnsafeMutableRawBufferPointer(rebasing: memory[count..<(count + Timestamp.maximumRFC3339Length)]))
        append("\"")
    }

    /// Appends `timestamp` quoted, or `null`.
    mutating func appendTimestamp(_ timestamp: Timestamp?) {
        if let timestamp { appendTimestamp(timestamp) } else { append("null") }
    }

    /// Appends a non-negative integer in decimal (at most 20 bytes).
    mutating func appendInteger(_ value: Int) {
        appendDecimal(UInt64(max(0, value)))
    }

    /// Appends `value` in decimal (at most 20 bytes), its digits made in scratch memory on the stack.
    mutating func appendDecimal(_ value: UInt64) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch
        withUnsafeMutableBytes(of: &digits) { scratch in
            var remaining = value
            var index = scratch.count
            repeat {
                index -= 1
                scratch[index] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            } while remaining > 0
            append(UnsafeRawBufferPointer(rebasing: scratch[index...]))
        }
    }

    /// The most bytes `appendTimestamp` writes.
    static let timestampBound = Timestamp.maximumRFC3339Length + 2
}
