import Testing

/// One hostile input of `HostileInputTests`: the bytes a client sends and the answers it must get.
struct HostileInput: Sendable, CustomTestStringConvertible {
    /// What the case proves; the name its test is reported under.
    let proves: String
    /// The bytes sent, line ends included.
    let bytes: [UInt8]
    /// One entry per answer line, in order: the error code, or `nil` for a success.
    let answers: [String?]
    /// Text the first answer must hold: an `id` echoed exactly as it was spelled.
    var echo: String? = nil

    var testDescription: String { proves }
}

extension HostileInput {
    /// A request line of text, with its `\n`.
    init(_ proves: String, line: String, answer: String?, echo: String? = nil) {
        self.init(proves: proves, bytes: Array(line.utf8) + [0x0A], answers: [answer], echo: echo)
    }

    /// A request line of raw bytes, with its `\n`.
    init(_ proves: String, bytes: [UInt8], answer: String?) {
        self.init(proves: proves, bytes: bytes + [0x0A], answers: [answer])
    }

    /// The longest case is 200 KB (100,000 levels of nesting): the table's server takes lines this long, so
    /// that each case reaches the decoder instead of the line limit (tested on its own).
    static let longestLine = 256 * 1024

    /// The issue's corpus: invalid UTF-8, NUL bytes, deep nesting, huge numbers, duplicate keys, lone
    /// `\r`, empty lines, whitespace, a byte order mark, trailing garbage, many keys, long escapes.
    static let all: [HostileInput] = utf8 + nul + nesting + numbers + duplicates + lineEnds + oddities

    static let utf8: [HostileInput] = [
        HostileInput("invalid UTF-8 in a string is bad_json", bytes: user([0xFF, 0xFE]), answer: "bad_json"),
        HostileInput("invalid UTF-8 outside strings is bad_json", bytes: text(#"{"op":"ping""#) + [0xC3] + text("}"), answer: "bad_json"),
        HostileInput("overlong UTF-8 is bad_json", bytes: user([0xC0, 0xAF]), answer: "bad_json"),
        HostileInput("a surrogate encoded in UTF-8 is bad_json", bytes: user([0xED, 0xA0, 0x80]), answer: "bad_json"),
        HostileInput("a lone surrogate escape is bad_json", line: #"{"op":"check","user":"\ud800"}"#, answer: "bad_json"),
        HostileInput(
            "a multi-byte character arriving in pieces is read whole",
            line: #"{"op":"check","user":"usér","id":"é"}"#, answer: nil, echo: #""id":"é""#
        ),
        HostileInput("a byte order mark before the object is bad_json", bytes: [0xEF, 0xBB, 0xBF] + text(#"{"op":"ping"}"#), answer: "bad_json"),
    ]

    static let nul: [HostileInput] = [
        HostileInput("a NUL byte inside a string is bad_json", bytes: user([0x61, 0, 0x62]), answer: "bad_json"),
        HostileInput("a NUL byte between tokens is bad_json", bytes: text(#"{"op":"ping","#) + [0] + text(#""id":1}"#), answer: "bad_json"),
        HostileInput("a NUL byte after the object is bad_json", bytes: text(#"{"op":"ping"}"#) + [0], answer: "bad_json"),
        HostileInput("a NUL byte alone is bad_json", bytes: [0], answer: "bad_json"),
        HostileInput(
            "an escaped NUL is data and is answered",
            line: #"{"op":"check","user":"a\u0000b","id":"nul"}"#, answer: nil, echo: #""id":"nul""#
        ),
        HostileInput("60 KB of escaped NULs in an unknown field are read, then refused", line: #"{"op":"ping","x":"\#(nulEscapes)"}"#, answer: "bad_request"),
        HostileInput("60 KB of escaped NULs as a user are bad_request", bytes: user(Array(nulEscapes.utf8)), answer: "bad_request"),
    ]

    static let nesting: [HostileInput] = [
        HostileInput("nesting 32 levels deep is answered", line: #"{"op":"ping","id":\#(arrays(31))}"#, answer: nil),
        HostileInput("nesting 33 levels deep is bad_json", line: #"{"op":"ping","x":\#(arrays(32))}"#, answer: "bad_json"),
        HostileInput("nesting 100,000 levels deep is bad_json", line: #"{"op":"ping","x":\#(arrays(100_000))}"#, answer: "bad_json"),
        HostileInput("an id nested 100,000 levels deep is bad_json", line: #"{"op":"ping","id":\#(arrays(100_000))}"#, answer: "bad_json"),
        HostileInput("100,000 unclosed brackets are bad_json", line: #"{"op":"ping","x":"# + unclosedBrackets, answer: "bad_json"),
    ]

    static let numbers: [HostileInput] = [
        HostileInput("a limit of 1e400 is bad_request", line: #"{"op":"history","user":"u1","limit":1e400}"#, answer: "bad_request"),
        HostileInput("a limit of 400 digits is bad_request", line: #"{"op":"history","user":"u1","limit":\#(digits)}"#, answer: "bad_request"),
        HostileInput("a limit of -0 is bad_request", line: #"{"op":"history","user":"u1","limit":-0}"#, answer: "bad_request"),
        HostileInput("an id of 1e400 is echoed as sent", line: #"{"op":"ping","id":1e400}"#, answer: nil, echo: #""id":1e400"#),
        HostileInput("an id of 400 digits is echoed as sent", line: #"{"op":"ping","id":\#(digits)}"#, answer: nil, echo: #""id":\#(digits)"#),
        HostileInput("an id of -0 is echoed as sent", line: #"{"op":"ping","id":-0}"#, answer: nil, echo: #""id":-0"#),
        HostileInput("a huge number in an unknown field is read, then refused", line: #"{"op":"ping","x":-1e400}"#, answer: "bad_request"),
    ]

    static let duplicates: [HostileInput] = [
        HostileInput("a repeated op is bad_request", line: #"{"op":"ping","op":"ping"}"#, answer: "bad_request"),
        HostileInput("a repeated id is bad_request", line: #"{"op":"ping","id":1,"id":2}"#, answer: "bad_request"),
        HostileInput("a known key repeated through an escape is bad_request", line: #"{"op":"ping","\u006fp":"ping"}"#, answer: "bad_request"),
        HostileInput("a repeated unknown key is refused", line: #"{"op":"ping","x":1,"x":2}"#, answer: "bad_request"),
        HostileInput("1000 unknown keys are read, then refused", line: #"{"op":"ping",\#(members { #""k\#($0)":\#($0)"# })}"#, answer: "bad_request"),
        HostileInput("one unknown key 1000 times is read, then refused", line: #"{"op":"ping",\#(members { _ in #""k":0"# })}"#, answer: "bad_request"),
    ]

    static let lineEnds: [HostileInput] = [
        HostileInput("a line holding only a carriage return is bad_json", line: "\r", answer: "bad_json"),
        HostileInput("two carriage returns then a newline are a line of whitespace, bad_json", line: "\r\r", answer: "bad_json"),
        HostileInput("a second carriage return after a request is whitespace", line: "{\"op\":\"ping\"}\r\r", answer: nil),
        HostileInput("a lone carriage return does not end a line", line: "{\"op\":\"ping\"}\r{\"op\":\"ping\"}", answer: "bad_json"),
        HostileInput("an empty line is bad_json", line: "", answer: "bad_json"),
        HostileInput(proves: "three empty lines get three answers", bytes: [0x0A, 0x0A, 0x0A], answers: Array(repeating: "bad_json", count: 3)),
        HostileInput("a line of spaces is bad_json", line: String(repeating: " ", count: 100), answer: "bad_json"),
        HostileInput(
            proves: "a bad line between good ones is answered in its place",
            bytes: text(#"{"op":"ping","id":1}"# + "\n") + [0xFF, 0x0A] + text(#"{"op":"ping","id":3}"# + "\n"),
            answers: [nil, "bad_json", nil]
        ),
    ]

    static let oddities: [HostileInput] = [
        HostileInput("trailing garbage after the object is bad_json", line: #"{"op":"ping"} x"#, answer: "bad_json"),
        HostileInput("a second object on the line is bad_json", line: #"{"op":"ping"}{"op":"ping"}"#, answer: "bad_json"),
        HostileInput("a stray closing brace is bad_json", line: #"{"op":"ping"}}"#, answer: "bad_json"),
        HostileInput("a raw tab inside a string is bad_json", line: "{\"op\":\"check\",\"user\":\"a\tb\"}", answer: "bad_json"),
        HostileInput("an array instead of an object is bad_request", line: #"[{"op":"ping"}]"#, answer: "bad_request"),
    ]

    private static func text(_ string: String) -> [UInt8] { Array(string.utf8) }

    /// A check whose `user` string holds `bytes` as they are.
    private static func user(_ bytes: [UInt8]) -> [UInt8] {
        text(#"{"op":"check","user":""#) + bytes + text(#""}"#)
    }

    /// 1000 object members, `member(index)` each, comma-separated.
    private static func members(_ member: (Int) -> String) -> String {
        (0..<1000).map(member).joined(separator: ",")
    }

    /// `depth` arrays, one inside the other: with the request object around them, `depth + 1` levels.
    private static func arrays(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    /// 10,000 escaped NULs: 60,000 bytes on the wire, 10,000 once decoded.
    private static let nulEscapes = String(repeating: #"\u0000"#, count: 10_000)
    /// A whole number of 400 digits, far beyond any integer type (and a `Double`).
    private static let digits = String(repeating: "9", count: 400)
    private static let unclosedBrackets = String(repeating: "[", count: 100_000)
}
