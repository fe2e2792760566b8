/// Why a text is not the JSON the client expected: where it went wrong and what was found.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset of the problem in the text.
    public var offset: Int
    public var reason: String

    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

extension JSONValue {
    /// The deepest nesting the parser follows; the server refuses more than 32, so a response never has it.
    public static let maximumDepth = 64

    /// Parses one complete JSON text (RFC 8259); whitespace around it is allowed, anything else after it
    /// is an error.
    public init(parsing text: String) throws(JSONParseError) {
        var parser = Parser(bytes: Array(text.utf8))
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.isAtEnd else { throw parser.failure("unexpected text after the JSON value") }
        self = value
    }

    private struct Parser {
        let bytes: [UInt8]
        var position = 0

        var isAtEnd: Bool { position >= bytes.count }

        func failure(_ reason: String) -> JSONParseError {
            JSONParseError(offset: position, reason: reason)
        }

        mutating func skipWhitespace() {
            while position < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[position]) { position += 1 }
        }

        mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
            guard depth < JSONValue.maximumDepth else { throw failure("nested deeper than \(JSONValue.maximumDepth) levels") }
            guard position < bytes.count else { throw failure("expected a value, found the end of the text") }
            switch bytes[position] {
            case UInt8(ascii: "{"): return try parseObject(depth: depth)
            case UInt8(ascii: "["): return try parseArray(depth: depth)
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): try expectWord("true"); return .bool(true)
            case UInt8(ascii: "f"): try expectWord("false"); return .bool(false)
            case UInt8(ascii: "n"): try expectWord("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
            default: throw failure("expected a value")
            }
        }

        mutating func expectWord(_ word: String) throws(JSONParseError) {
            let expected = Array(word.utf8)
            guard bytes.count - position >= expected.count,
                Array(bytes[position..<position + expected.count]) == expected
            else { throw failure("expected \(word)") }
            position += expected.count
        }

        mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
            position += 1
            var members: [(key: String, value: JSONValue)] = []
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                    throw failure("expected a string key in an object")
                }
                let key = try parseString()
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw failure("expected ':' after a key") }
                position += 1
                skipWhitespace()
                members.append((key, try parseValue(depth: depth + 1)))
                skipWhitespace()
                guard position < bytes.count else { throw failure("unterminated object") }
                if bytes[position] == UInt8(ascii: ",") {
                    position += 1
                } else if bytes[position] == UInt8(ascii: "}") {
                    position += 1
                    return .object(members)
                } else {
                    throw failure("expected ',' or '}' in an object")
                }
            }
        }

        mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
            position += 1
            var values: [JSONValue] = []
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(values)
            }
            while true {
                skipWhitespace()
                values.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                guard position < bytes.count else { throw failure("unterminated array") }
                if bytes[position] == UInt8(ascii: ",") {
                    position += 1
                } else if bytes[position] == UInt8(ascii: "]") {
                    position += 1
                    return .array(values)
                } else {
                    throw failure("expected ',' or ']' in an array")
                }
            }
        }

        mutating func parseNumber() throws(JSONParseError) -> String {
            let start = position
            func digits(_ parser: inout Parser) -> Int {
                let first = parser.position
                while parser.position < parser.bytes.count,
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(parser.bytes[parser.position])
                {
                    parser.position += 1
                }
                return parser.position - first
            }
            if bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard position < bytes.count else { throw failure("a number needs digits") }
            if bytes[position] == UInt8(ascii: "0") {
                position += 1
            } else if digits(&self) == 0 {
                throw failure("a number needs digits")
            }
            if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
                position += 1
                guard digits(&self) > 0 else { throw failure("a fraction needs digits") }
            }
            if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
                position += 1
                if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                    position += 1
                }
                guard digits(&self) > 0 else { throw failure("an exponent needs digits") }
            }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        mutating func parseString() throws(JSONParseError) -> String {
            position += 1
            var scalars = String.UnicodeScalarView()
            var runStart = position
            func flushRun(_ parser: Parser, into scalars: inout String.UnicodeScalarView) {
                scalars.append(contentsOf: String(decoding: parser.bytes[runStart..<parser.position], as: UTF8.self).unicodeScalars)
            }
            while true {
                guard position < bytes.count else { throw failure("unterminated string") }
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    if scalars.isEmpty {
                        // No escape on the way (the usual string): decoded at once, without a scalar view.
                        let text = String(decoding: bytes[runStart..<position], as: UTF8.self)
                        position += 1
                        return text
                    }
                    flushRun(self, into: &scalars)
                    position += 1
                    return String(scalars)
                }
                if byte < 0x20 { throw failure("a control character inside a string") }
                if byte != UInt8(ascii: "\\") {
                    position += 1
                    continue
                }
                flushRun(self, into: &scalars)
                position += 1
                guard position < bytes.count else { throw failure("unterminated escape") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800..<0xDC00).contains(code), bytes.count - position >= 6,
                        bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                    {
                        position += 2
                        let low = try parseHex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw failure("a high surrogate without its low half") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw failure("a lone surrogate escape") }
                    scalars.append(scalar)
                default: throw failure("an unknown escape")
                }
                runStart = position
            }
        }

        mutating func parseHex4() throws(JSONParseError) -> UInt32 {
            guard bytes.count - position >= 4 else { throw failure("\\u needs four hex digits") }
            var code: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[position]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw failure("\\u needs four hex digits")
                }
                code = code << 4 | UInt32(digit)
                position += 1
            }
            return code
        }
    }
}
