/// A syntax check of the configuration file's JSON, for the two things `JSONDecoder` does not tell: where
/// the text stops being JSON (its error says only that it is not valid JSON), and which keys of the object
/// are given twice (it keeps one of them without a word, so one of two `"port"` lines would be ignored).
///
/// It only checks; `JSONDecoder` still decodes the values (escapes, numbers), once this found nothing wrong.
struct SettingsFileSyntax {
    /// Where and why the text is not JSON: `line 3, column 12: expected , or } after a value`.
    struct Problem: Error, Sendable, CustomStringConvertible {
        let line: Int
        let column: Int
        let reason: String

        var description: String { "line \(line), column \(column): \(reason)" }
    }

    /// Lists and objects nest at most this deep: far more than a configuration needs, and the check recurses.
    private static let maximumDepth = 32

    private let bytes: [UInt8]
    private var offset = 0
    /// The top-level object's keys as written between their quotes, in order.
    private var topLevelKeys: [String] = []

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Checks `bytes`; returns the keys of the top-level object given more than once (as written, in the
    /// order of their second appearance), none when the text is not an object.
    static func repeatedKeys(in bytes: [UInt8]) throws(Problem) -> [String] {
        var syntax = SettingsFileSyntax(bytes: bytes)
        syntax.skipWhitespace()
        guard syntax.offset < bytes.count else { throw syntax.problem("the file holds no JSON value") }
        try syntax.value(depth: 0)
        syntax.skipWhitespace()
        if let byte = syntax.current {
            let isComment = byte == UInt8(ascii: "/") || byte == UInt8(ascii: "#")
            throw syntax.problem(isComment ? "JSON allows no comments" : "unexpected text after the JSON value")
        }
        var seen = Set<String>()
        var repeated: [String] = []
        for key in syntax.topLevelKeys where !seen.insert(key).inserted && !repeated.contains(key) {
            repeated.append(key)
        }
        return repeated
    }

    private mutating func value(depth: Int) throws(Problem) {
        guard depth <= Self.maximumDepth else { throw problem("lists and objects nest more than \(Self.maximumDepth) deep") }
        guard let byte = current else { throw problem("the text ends where a value should be") }
        switch byte {
        case UInt8(ascii: "{"): try object(depth: depth)
        case UInt8(ascii: "["): try list(depth: depth)
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "'"): throw problem("strings take double quotes, not single ones")
        case UInt8(ascii: "/"), UInt8(ascii: "#"): throw problem("JSON allows no comments")
        default: throw problem("expected a value: a string in double quotes, a number, true, false, null, a list or an object")
        }
    }

    private mutating func object(depth: Int) throws(Problem) {
        offset += 1  // {
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            offset += 1
            return
        }
        while true {
            skipWhitespace()
            switch current {
            case UInt8(ascii: "\"")?: break
            case UInt8(ascii: "}")?: throw problem("a comma before } (JSON allows no trailing comma)")
            case UInt8(ascii: "'")?: throw problem("keys take double quotes, not single ones")
            case UInt8(ascii: "/")?, UInt8(ascii: "#")?: throw problem("JSON allows no comments")
            case nil: throw problem("the text ends inside an object: a } is missing")
            default: throw problem("expected a key in double quotes")
            }
            let key = try string()
            if depth == 0 { topLevelKeys.append(key) }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw problem("expected : after the key \"\(key)\"") }
            offset += 1
            skipWhitespace()
            try value(depth: depth + 1)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ",")?: offset += 1
            case UInt8(ascii: "}")?:
                offset += 1
                return
            case nil: throw problem("the text ends inside an object: a } is missing")
            default: throw problem("expected , or } after a value")
            }
        }
    }

    private mutating func list(depth: Int) throws(Problem) {
        offset += 1  // [
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            offset += 1
            return
        }
        while true {
            skipWhitespace()
            if current == UInt8(ascii: "]") { throw problem("a comma before ] (JSON allows no trailing comma)") }
            try value(depth: depth + 1)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ",")?: offset += 1
            case UInt8(ascii: "]")?:
                offset += 1
                return
            case nil: throw problem("the text ends inside a list: a ] is missing")
            default: throw problem("expected , or ] after a value")
            }
        }
    }

    /// Checks a string at its opening quote and returns its text as written (escapes not decoded: enough to
    /// compare keys, which are plain names).
    private mutating func string() throws(Problem) -> String {
        let start = offset
        offset += 1  // "
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                return String(decoding: bytes[(start + 1)..<(offset - 1)], as: UTF8.self)
            case UInt8(ascii: "\\"):
                offset += 1
                guard let escaped = current else { break }
                if escaped == UInt8(ascii: "u") {
                    for _ in 0..<4 {
                        offset += 1
                        guard let digit = current, Self.isHexadecimal(digit) else {
                            throw problem("\\u takes four hexadecimal digits")
                        }
                    }
                } else if !Array("\"\\/bfnrt".utf8).contains(escaped) {
                    throw problem("unknown escape in a string; a backslash is written \\\\")
                }
                offset += 1
            case 0..<0x20:
                throw problem("a string holds a line break or another control character; write it escaped, such as \\n")
            default:
                offset += 1
            }
        }
        offset = start
        throw problem("a string is not closed: a \" is missing")
    }

    private mutating func number() throws(Problem) {
        if current == UInt8(ascii: "-") { offset += 1 }
        guard digits() > 0 else { throw problem("expected a digit in a number") }
        if current == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { throw problem("expected a digit after the decimal point") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            offset += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { offset += 1 }
            guard digits() > 0 else { throw problem("expected a digit in the exponent") }
        }
    }

    /// Consumes decimal digits; returns how many.
    private mutating func digits() -> Int {
        let start = offset
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { offset += 1 }
        return offset - start
    }

    private mutating func literal(_ word: String) throws(Problem) {
        let expected = Array(word.utf8)
        guard bytes[offset...].starts(with: expected) else {
            throw problem("expected \(word)" + (word == "true" || word == "false" ? " (in lower case, without quotes)" : ""))
        }
        offset += expected.count
    }

    private var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { offset += 1 }
    }

    private static func isHexadecimal(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    /// A problem at the current offset, with its line and column (columns count bytes: the file is JSON
    /// keys and paths, mostly ASCII).
    private func problem(_ reason: String) -> Problem {
        let end = min(offset, bytes.count)
        let before = bytes[..<end]
        let line = before.count { $0 == 0x0A } + 1
        let lineStart = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        return Problem(line: line, column: end - lineStart + 1, reason: reason)
    }
}
