#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// A byte-level JSON scanner for request lines.
//
// Measured for the engineering notes on this kind of machine: JSONDecoder takes about 4 µs for a small
// request and JSONSerialization about 3 µs, while a scanner over the bytes takes 60-100 ns. Requests are
// flat objects of short strings, so this scanner reads them directly from the connection's buffer: it
// validates the full JSON grammar (RFC 8259) and UTF-8, builds Strings only for the values a request uses,
// and matches keys and skips other values in place (only strings with escapes or non-ASCII bytes are
// decoded into a scratch String to be validated).

/// A syntax error: the line is not valid JSON.
struct JSONSyntaxError: Error {
    /// Byte offset in the line where the scanner gave up.
    var offset: Int
    /// What it expected or found, for the error message.
    var problem: String
}

/// Where a string value lies in a line: its bytes between the quotes.
struct StringSpan {
    /// Offset of the first byte after the opening quote.
    var start: Int
    /// Offset of the closing quote.
    var end: Int
    /// `false` when the bytes hold escapes or non-ASCII bytes: they are decoded (and validated) to be used.
    var isPlain: Bool

    /// The bytes between the quotes, as they are on the wire.
    func rawBytes(in bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }
}

/// Reads JSON values from a buffer of bytes, front to back.
struct JSONScanner {
    /// How deeply arrays and objects may nest inside a request before it is refused.
    static let maximumDepth = 32

    let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { offset >= bytes.count }

    /// The next byte after whitespace, without consuming it; `nil` at the end.
    @inline(__always)
    mutating func peekSignificant() -> UInt8? {
        // Compact lines have no whitespace between tokens: answer those without entering the loop.
        if offset < bytes.count, bytes[offset] > UInt8(ascii: " ") { return bytes[offset] }
        skipWhitespace()
        return isAtEnd ? nil : bytes[offset]
    }

    /// The offset of the first byte from `offset` on that is a quote, a backslash, a control character or
    /// not ASCII (`bytes.count` if none is): the end of a plain string's text, or where it stops being
    /// plain.
    ///
    /// Eight bytes at a time while eight remain (a bit trick that flags any special byte in a word), then
    /// byte by byte: a byte loop cost about 18 instructions a byte in callgrind, and ids are 10-40 bytes.
    @inline(__always)
    private func endOfPlainText(from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return start }
        let count = bytes.count
        var index = start
        while index + 8 <= count {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            if Self.hasSpecialByte(word) { break }
            index += 8
        }
        while index < count {
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
            index += 1
        }
        return index
    }

    mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): offset += 1
            default: return
            }
        }
    }

    /// Consumes `byte` (after whitespace) or fails with `problem`.
    mutating func expect(_ byte: UInt8, _ problem: @autoclosure () -> String) throws(JSONSyntaxError) {
        guard peekSignificant() == byte else { throw error(problem()) }
        offset += 1
    }

    /// Consumes `byte` (after whitespace) if it is next.
    mutating func consume(_ byte: UInt8) -> Bool {
        guard peekSignificant() == byte else { return false }
        offset += 1
        return true
    }

    func error(_ problem: String) -> JSONSyntaxError {
        JSONSyntaxError(offset: offset, problem: isAtEnd ? "\(problem), found the end of the line" : problem)
    }

    // MARK: Strings

    /// Reads a string (the scanner must be at its opening quote, after whitespace) and returns it.
    mutating func readString() throws(JSONSyntaxError) -> String {
        try expect(UInt8(ascii: "\""), "expected a string")
        let start = offset
        var needsValidation = false
        // Fast path: no escapes. Most ids and names are plain ASCII.
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<offset])
                offset += 1
                if !needsValidation {
                    return String(decoding: raw, as: UTF8.self)
                }
                guard let string = String(validating: raw, as: UTF8.self) else {
                    throw JSONSyntaxError(offset: start, problem: "a string is not valid UTF-8")
                }
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("a control character must be escaped inside a string") }
            if byte >= 0x80 { needsValidation = true }
            offset += 1
        }
        guard offset < bytes.count else { throw error("a string is not closed") }
        return try readEscapedString(from: start)
    }

    /// Whether any of the eight bytes of `word` is a quote, a backslash, a control character or not ASCII.
    ///
    /// `(x - 0x01…) & ~x & 0x80…` is non-zero exactly when some byte of `x` is zero (the classic test of
    /// "Bit Twiddling Hacks"); applied to `word` XOR a repeated quote or backslash it finds those bytes, and
    /// applied as `word - 0x20…` it finds bytes below 0x20. Bytes of 0x80 and more are their top bit.
    @inline(__always)
    static func hasSpecialByte(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let hasQuote = (quotes &- ones) & ~quotes
        let hasBackslash = (backslashes &- ones) & ~backslashes
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl | word) & highBits != 0
    }

    /// Reads a string, validating it, and returns where its text lies instead of building a String: a
    /// request names several strings and an operation uses one or two of them (`string(_:)` builds those).
    mutating func readStringSpan() throws(JSONSyntaxError) -> StringSpan {
        try expect(UInt8(ascii: "\""), "expected a string")
        let start = offset
        let end = endOfPlainText(from: start)
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            offset = end + 1
            return StringSpan(start: start, end: end, isPlain: true)
        }
        // Escapes, non-ASCII, a control character or no closing quote: validate the whole string the slow way now; it is decoded again if used.
        offset = start - 1
        _ = try readString()
        return StringSpan(start: start, end: offset - 1, isPlain: false)
    }

    /// The text of a string this scanner's bytes hold at `span`.
    func string(_ span: StringSpan) -> String {
        if span.isPlain {
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[span.start..<span.end]), as: UTF8.self)
        }
        var scanner = JSONScanner(bytes)
        scanner.offset = span.start - 1
        do throws(JSONSyntaxError) {
            return try scanner.readString()
        } catch {
            // `readStringSpan` validated these bytes before handing out the span.
            assertionFailure("a span of an invalid string: \(error.problem)")
            return ""
        }
    }

    /// Reads a string and calls `body` with its UTF-8 bytes, without building a String when the string is
    /// plain ASCII without escapes (every key the protocol defines): keys are matched and skipped strings
    /// validated in place.
    mutating func withStringBytes<Result>(
        _ body: (UnsafeRawBufferPointer) -> Result
    ) throws(JSONSyntaxError) -> Result {
        try expect(UInt8(ascii: "\""), "expected a string")
        let start = offset
        let end = endOfPlainText(from: start)
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            offset = end + 1
            return body(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
        }
        // Escapes, non-ASCII, a control character or no closing quote: decode and validate the whole
        // string the slow way (which reports what is wrong, where).
        offset = start - 1
        var string = try readString()
        return string.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    /// The slow path of `readString`: decodes escapes into a scratch array.
    private mutating func readEscapedString(from start: Int) throws(JSONSyntaxError) -> String {
        var decoded = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<offset]))
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                guard let string = String(validating: decoded, as: UTF8.self) else {
                    throw JSONSyntaxError(offset: start, problem: "a string is not valid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                offset += 1
                guard offset < bytes.count else { throw error("a string is not closed") }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape(to: &decoded)
                default:
                    offset -= 1
                    throw error("unknown escape sequence in a string")
                }
            default:
                if byte < 0x20 { throw error("a control character must be escaped inside a string") }
                decoded.append(byte)
                offset += 1
            }
        }
        throw error("a string is not closed")
    }

    private mutating func readHexQuad() throws(JSONSyntaxError) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw error("\\u needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("\\u needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }

    private mutating func appendUnicodeEscape(to decoded: inout [UInt8]) throws(JSONSyntaxError) {
        var scalarValue = try readHexQuad()
        if (0xD800...0xDBFF).contains(scalarValue) {
            guard offset + 2 <= bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u")
            else { throw error("a \\u escape of a high surrogate must be followed by a low surrogate") }
            offset += 2
            let low = try readHexQuad()
            guard (0xDC00...0xDFFF).contains(low) else {
                throw error("a \\u escape of a high surrogate must be followed by a low surrogate")
            }
            scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(scalarValue) else { throw error("a \\u escape names a lone surrogate") }
        decoded.append(contentsOf: UTF8.encode(scalar)!)
    }

    // MARK: Skipping values

    /// Skips one value of any type, validating it. Returns the byte range it covered.
    @discardableResult
    mutating func skipValue(depth: Int = 0) throws(JSONSyntaxError) -> Range<Int> {
        guard let first = peekSignificant() else { throw error("expected a value") }
        let start = offset
        switch first {
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "{"):
            guard depth < Self.maximumDepth else { throw error("values nest deeper than \(Self.maximumDepth) levels") }
            offset += 1
            if !consume(UInt8(ascii: "}")) {
                repeat {
                    guard peekSignificant() == UInt8(ascii: "\"") else { throw error("expected a key in quotes") }
                    try skipString()
                    try expect(UInt8(ascii: ":"), "expected ':' after a key")
                    try skipValue(depth: depth + 1)
                } while consume(UInt8(ascii: ","))
                try expect(UInt8(ascii: "}"), "expected ',' or '}' in an object")
            }
        case UInt8(ascii: "["):
            guard depth < Self.maximumDepth else { throw error("values nest deeper than \(Self.maximumDepth) levels") }
            offset += 1
            if !consume(UInt8(ascii: "]")) {
                repeat {
                    try skipValue(depth: depth + 1)
                } while consume(UInt8(ascii: ","))
                try expect(UInt8(ascii: "]"), "expected ',' or ']' in an array")
            }
        case UInt8(ascii: "t"): try skipLiteral("true")
        case UInt8(ascii: "f"): try skipLiteral("false")
        case UInt8(ascii: "n"): try skipLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try skipNumber()
        default: throw error("expected a value")
        }
        return start..<offset
    }

    /// Consumes `null` if it is next.
    mutating func consumeNull() -> Bool {
        guard peekSignificant() == UInt8(ascii: "n") else { return false }
        return (try? skipLiteral("null")) != nil
    }

    private mutating func skipString() throws(JSONSyntaxError) {
        try withStringBytes { _ in }
    }

    private mutating func skipLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let length = literal.utf8CodeUnitCount
        guard offset + length <= bytes.count,
            memcmp(bytes.baseAddress! + offset, literal.utf8Start, length) == 0
        else { throw error("expected a value") }
        offset += length
    }

    private mutating func skipNumber() throws(JSONSyntaxError) {
        func isDigit(_ index: Int) -> Bool {
            index < bytes.count && bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9")
        }
        if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        guard isDigit(offset) else { throw error("expected a digit in a number") }
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
        } else {
            while isDigit(offset) { offset += 1 }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard isDigit(offset) else { throw error("expected a digit after the decimal point") }
            while isDigit(offset) { offset += 1 }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                offset += 1
            }
            guard isDigit(offset) else { throw error("expected a digit in an exponent") }
            while isDigit(offset) { offset += 1 }
        }
    }
}
