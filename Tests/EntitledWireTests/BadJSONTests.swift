import NIOCore
import Testing

@testable import EntitledCore
@testable import EntitledWire

/// A malformed line is refused with `bad_json`.
@Suite struct BadJSONTests {
    @Test func textThatIsNotJSONIsBadJSON() throws {
        try expectBadJSON("hello", mentioning: "invalid JSON")
        try expectBadJSON("op=ping")
        try expectBadJSON("{op:\"ping\"}")
        try expectBadJSON("{'op':'ping'}")
        try expectBadJSON(#"{"op":"ping","x":tru}"#)
    }

    @Test func aTruncatedObjectIsBadJSON() throws {
        try expectBadJSON(#"{"op":"ping""#)
        try expectBadJSON(#"{"op":"ping","#)
        try expectBadJSON(#"{"op":"#)
        try expectBadJSON("{")
    }

    @Test func aTrailingCommaIsBadJSON() throws {
        try expectBadJSON(#"{"op":"ping",}"#)
        try expectBadJSON(#"{"op":"define","entitlement":"pro","products":["a",]}"#)
    }

    @Test func anUnterminatedStringIsBadJSON() throws {
        try expectBadJSON(#"{"op":"ping"#, mentioning: "not closed")
        try expectBadJSON(##"{"op":"ping","user":"a\""##)
        try expectBadJSON(#"{"op":"ping","user":"a\n"#)
    }

    @Test func invalidUTF8InAStringIsBadJSON() throws {
        let prefix = Array(#"{"op":"check","user":""#.utf8)
        let suffix = Array(#""}"#.utf8)
        try expectBadJSON(decode(bytes: prefix + [0xFF] + suffix), mentioning: "UTF-8")
        try expectBadJSON(decode(bytes: prefix + [0xC3, 0x28] + suffix), mentioning: "UTF-8")  // a broken two-byte sequence
        try expectBadJSON(decode(bytes: prefix + [0xC0, 0xAF] + suffix), mentioning: "UTF-8")  // an overlong encoding
        try expectBadJSON(decode(bytes: prefix + [0xED, 0xA0, 0x80] + suffix), mentioning: "UTF-8")  // an encoded surrogate
        try expectBadJSON(decode(bytes: prefix + Array(#"a\n"#.utf8) + [0xFF] + suffix), mentioning: "UTF-8")  // after an escape
        // In a field the protocol does not define, which is skipped but still validated.
        try expectBadJSON(decode(bytes: Array(#"{"op":"ping","extra":""#.utf8) + [0xFE] + suffix))
        // In a key.
        try expectBadJSON(decode(bytes: Array(#"{"op":"ping",""#.utf8) + [0xFF] + Array(#"":1}"#.utf8)))
    }

    @Test func aRawControlCharacterInAStringIsBadJSON() throws {
        try expectBadJSON("{\"op\":\"check\",\"user\":\"a\tb\"}", mentioning: "control character")
        try expectBadJSON("{\"op\":\"check\",\"user\":\"a\u{01}b\"}", mentioning: "control character")
        try expectBadJSON("{\"op\":\"check\",\"user\":\"a\\n\u{1F}b\"}", mentioning: "control character")
        try expectBadJSON("{\"op\":\"check\",\"user\":\"a\nb\"}")
    }

    @Test func aLoneSurrogateEscapeIsBadJSON() throws {
        try expectBadJSON(#"{"op":"check","user":"\ud800"}"#, mentioning: "surrogate")
        try expectBadJSON(#"{"op":"check","user":"\udc00"}"#, mentioning: "surrogate")
        try expectBadJSON(#"{"op":"check","user":"\ud800\u0041"}"#, mentioning: "surrogate")
        try expectBadJSON(#"{"op":"check","user":"\ud800x"}"#, mentioning: "surrogate")
    }

    @Test func badEscapesAreBadJSON() throws {
        try expectBadJSON(#"{"op":"check","user":"\x41"}"#, mentioning: "escape")
        try expectBadJSON(#"{"op":"check","user":"\u00g1"}"#, mentioning: "hex")
        try expectBadJSON(#"{"op":"check","user":"\u00"}"#)
    }

    @Test func nestingDeeperThanTheLimitInsideAnUnknownFieldIsBadJSON() throws {
        let depth = 1000
        let deepArrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        try expectBadJSON(#"{"op":"ping","extra":\#(deepArrays)}"#, mentioning: "nest")
        let deepObjects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        try expectBadJSON(#"{"op":"ping","extra":\#(deepObjects)}"#, mentioning: "nest")
        try expectBadJSON(#"{"op":"ping","id":\#(deepArrays)}"#, mentioning: "nest")
    }

    @Test func nestingUpToTheLimitIsAccepted() throws {
        // The request object is the first level; its values may nest `maximumDepth - 1` more.
        let allowed = JSONScanner.maximumDepth - 1
        let arrays = String(repeating: "[", count: allowed) + String(repeating: "]", count: allowed)
        let decoded = try request(#"{"op":"ping","id":\#(arrays)}"#)
        guard case .ping = decoded else {
            Issue.record("decoded \(decoded)")
            return
        }
        // In an unknown field: read to its end (valid JSON), then refused for being unknown.
        try expectBadRequest(#"{"op":"ping","extra":\#(arrays)}"#, mentioning: #"unknown field "extra""#)
        let tooDeep = String(repeating: "[", count: allowed + 1) + String(repeating: "]", count: allowed + 1)
        try expectBadJSON(#"{"op":"ping","extra":\#(tooDeep)}"#, mentioning: "nest")
    }

    @Test func anEmptyLineIsBadJSON() throws {
        try expectBadJSON("", mentioning: "empty line")
        try expectBadJSON("\r", mentioning: "empty line")
        try expectBadJSON("   ")
    }

    @Test func garbageAfterTheObjectIsBadJSON() throws {
        try expectBadJSON(#"{"op":"ping"} x"#, mentioning: "end of the line")
        try expectBadJSON(#"{"op":"ping"}{"op":"ping"}"#)
        try expectBadJSON(#"{"op":"ping"}}"#)
        try expectBadJSON(#"{"op":"ping"},"#)
    }

    @Test func invalidNumbersAreBadJSON() throws {
        for number in ["01", "1.", "-", "1e", "-01", ".5", "+1", "1e+", "0x10", "1.e3", "NaN", "Infinity"] {
            try expectBadJSON(#"{"op":"ping","id":\#(number)}"#)
            try expectBadJSON(#"{"op":"ping","extra":\#(number)}"#)
            try expectBadJSON(#"{"op":"ping","extra":[\#(number)]}"#)
        }
    }

    @Test func validNumbersAreAccepted() throws {
        for number in ["0", "-0", "1", "-1", "0.5", "1e3", "1E-3", "-12.5e+10", "123456789012345678901234567890"] {
            try expectBadRequest(#"{"op":"ping","extra":\#(number),"id":\#(number)}"#, mentioning: #"unknown field "extra""#)
            let decoded = try request(#"{"op":"ping","id":\#(number)}"#)
            guard case .ping = decoded else {
                Issue.record("decoded \(decoded) for \(number)")
                continue
            }
        }
    }

    @Test func aBadJSONMessageSaysWhereTheProblemIs() throws {
        let error = try failure(#"{"op":"ping",}"#)
        #expect(error.message.hasPrefix("invalid JSON at byte "))
    }
}
