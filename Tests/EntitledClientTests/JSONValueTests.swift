import Testing

@testable import EntitledClient

/// The client's JSON: parsing a response line into a tree, and writing a tree as one compact line.
@Suite struct JSONValueTests {
    static func parsed(_ text: String) throws -> JSONValue {
        try JSONValue(parsing: text)
    }

    /// The error a text is refused with; `nil` when it parses.
    static func parseError(_ text: String) -> JSONParseError? {
        do {
            _ = try JSONValue(parsing: text)
            return nil
        } catch {
            return error
        }
    }

    static func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    // MARK: - Parsing

    @Suite struct Parsing {
        @Test func literalsParseToTheirCases() throws {
            #expect(try parsed("null") == .null)
            #expect(try parsed("true") == .bool(true))
            #expect(try parsed("false") == .bool(false))
            #expect(try parsed("null").isNull)
        }

        @Test func numbersKeepTheirSpelling() throws {
            for text in ["0", "-0", "42", "-17", "3.25", "-2.5e3", "1E+2", "6.02e-23", "12345678901234567890"] {
                #expect(try parsed(text) == .number(text), "\(text)")
            }
        }

        @Test func intValueIsGivenOnlyForWholeNumbersThatFit() throws {
            #expect(try parsed("7").intValue == 7)
            #expect(try parsed("-7").intValue == -7)
            #expect(try parsed("1.0").intValue == nil)
            #expect(try parsed("1e2").intValue == nil)
            #expect(try parsed("12345678901234567890").intValue == nil)
            #expect(try parsed(#""7""#).intValue == nil)
        }

        @Test func stringsKeepUTF8TextAsIs() throws {
            #expect(try parsed(#""héllo wörld 😀 日本""#) == .string("héllo wörld 😀 日本"))
            #expect(try parsed(#""""#) == .string(""))
        }

        @Test func everyShortEscapeIsDecoded() throws {
            #expect(try parsed(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{08}\u{0C}\n\r\t"))
            #expect(try parsed(#""a\nb""#).stringValue == "a\nb")
        }

        @Test func unicodeEscapesAreDecodedInEitherCase() throws {
            #expect(try parsed(#""\u00e9\u00E9\u0041""#) == .string("ééA"))
            #expect(try parsed(#""\u0000""#) == .string("\u{0}"))
            #expect(try parsed(#""\u2028""#) == .string("\u{2028}"))
        }

        @Test func aSurrogatePairIsOneScalar() throws {
            #expect(try parsed(#""\uD83D\uDE00""#) == .string("😀"))
            #expect(try parsed(#""\ud83d\ude00!""#) == .string("😀!"))
            #expect(try parsed(#""x\uD834\uDD1Ey""#) == .string("x𝄞y"))
        }

        @Test func arraysKeepTheirOrderAndMixTypes() throws {
            let value = try parsed(#"[1, "a", [true, null], {}]"#)
            #expect(value == .array([.number("1"), .string("a"), .array([.bool(true), .null]), .object([])]))
            #expect(try parsed("[]") == .array([]))
            #expect(try parsed("[ \n ]") == .array([]))
        }

        @Test func objectMembersKeepTheOrderTheTextGaveThem() throws {
            let value = try parsed(#"{"z":1,"a":2,"m":{"y":true,"b":null}}"#)
            #expect(value.objectMembers?.map(\.key) == ["z", "a", "m"])
            #expect(value["m"]?.objectMembers?.map(\.key) == ["y", "b"])
            #expect(value["a"] == .number("2"))
            #expect(value["missing"] == nil)
            #expect(try parsed("{}") == .object([]))
            #expect(try parsed("{ }") == .object([]))
        }

        @Test func aRepeatedKeyIsKeptAndLookupFindsTheFirst() throws {
            let value = try parsed(#"{"k":1,"k":2}"#)
            #expect(value.objectMembers?.count == 2)
            #expect(value["k"] == .number("1"))
        }

        @Test func whitespaceAroundAndBetweenTokensIsAllowed() throws {
            #expect(try parsed(" \t\r\n{ \"a\" :\t[ 1 ,2 ] }\r\n ") == .object([(key: "a", value: .array([1, 2]))]))
        }

        @Test func accessorsAnswerNilForOtherTypes() throws {
            let number = try parsed("1")
            #expect(number.stringValue == nil)
            #expect(number.boolValue == nil)
            #expect(number.arrayValue == nil)
            #expect(number.objectMembers == nil)
            #expect(number["key"] == nil)
            #expect(!number.isNull)
            #expect(try parsed("[1]").arrayValue == [.number("1")])
            #expect(try parsed("false").boolValue == false)
        }

        @Test func nestingUpToTheMaximumDepthIsFollowed() throws {
            var value = try parsed(nested(JSONValue.maximumDepth))
            var depth = 0
            while case .array(let inner) = value, let first = inner.first {
                value = first
                depth += 1
            }
            #expect(depth == JSONValue.maximumDepth - 1)
        }
    }

    // MARK: - Errors

    @Suite struct ParseErrors {
        @Test func textAfterTheValueIsRefusedAtItsOffset() {
            #expect(parseError(#"{"a":1} x"#) == JSONParseError(offset: 8, reason: "unexpected text after the JSON value"))
            #expect(parseError("1 2") == JSONParseError(offset: 2, reason: "unexpected text after the JSON value"))
            #expect(parseError("truex") == JSONParseError(offset: 4, reason: "unexpected text after the JSON value"))
            #expect(parseError("01") == JSONParseError(offset: 1, reason: "unexpected text after the JSON value"))
        }

        @Test func offsetsCountBytesNotCharacters() {
            #expect(parseError(#""é" x"#) == JSONParseError(offset: 5, reason: "unexpected text after the JSON value"))
        }

        @Test func theDescriptionNamesTheByteAndTheReason() {
            #expect(parseError(#"{"a":1} x"#)?.description == "invalid JSON at byte 8: unexpected text after the JSON value")
        }

        @Test func anUnterminatedStringIsRefusedAtTheEnd() {
            #expect(parseError(#""abc"#) == JSONParseError(offset: 4, reason: "unterminated string"))
            #expect(parseError(#"{"a":"b"#) == JSONParseError(offset: 7, reason: "unterminated string"))
            #expect(parseError(#""abc\"#) == JSONParseError(offset: 5, reason: "unterminated escape"))
        }

        @Test func badNumbersAreRefusedWhereTheDigitsAreMissing() {
            #expect(parseError("-") == JSONParseError(offset: 1, reason: "a number needs digits"))
            #expect(parseError("-a") == JSONParseError(offset: 1, reason: "a number needs digits"))
            #expect(parseError("1.") == JSONParseError(offset: 2, reason: "a fraction needs digits"))
            #expect(parseError("[1.e5]") == JSONParseError(offset: 3, reason: "a fraction needs digits"))
            #expect(parseError("1e") == JSONParseError(offset: 2, reason: "an exponent needs digits"))
            #expect(parseError("1E+") == JSONParseError(offset: 3, reason: "an exponent needs digits"))
            #expect(parseError("+1") == JSONParseError(offset: 0, reason: "expected a value"))
            #expect(parseError(".5") == JSONParseError(offset: 0, reason: "expected a value"))
        }

        @Test func nestingDeeperThanTheMaximumIsRefusedAtTheFirstLevelTooDeep() {
            let depth = JSONValue.maximumDepth
            #expect(depth == 64)
            #expect(parseError(nested(depth + 1)) == JSONParseError(offset: depth, reason: "nested deeper than 64 levels"))
            let objects = String(repeating: #"{"a":"#, count: depth + 1) + "1" + String(repeating: "}", count: depth + 1)
            #expect(parseError(objects) == JSONParseError(offset: 5 * depth, reason: "nested deeper than 64 levels"))
        }

        @Test func emptyTextIsNotAValue() {
            #expect(parseError("") == JSONParseError(offset: 0, reason: "expected a value, found the end of the text"))
            #expect(parseError("  ") == JSONParseError(offset: 2, reason: "expected a value, found the end of the text"))
            #expect(parseError("[") == JSONParseError(offset: 1, reason: "expected a value, found the end of the text"))
        }

        @Test func misspelledLiteralsAreRefusedAtTheirStart() {
            #expect(parseError("tru") == JSONParseError(offset: 0, reason: "expected true"))
            #expect(parseError("falsy") == JSONParseError(offset: 0, reason: "expected false"))
            #expect(parseError("[nul]") == JSONParseError(offset: 1, reason: "expected null"))
        }

        @Test func badStringContentIsRefused() {
            #expect(parseError("\"a\nb\"") == JSONParseError(offset: 2, reason: "a control character inside a string"))
            #expect(parseError(#""\x""#) == JSONParseError(offset: 3, reason: "an unknown escape"))
            #expect(parseError(#""\u12""#) == JSONParseError(offset: 3, reason: #"\u needs four hex digits"#))
            #expect(parseError(#""\u12G4""#) == JSONParseError(offset: 5, reason: #"\u needs four hex digits"#))
        }

        @Test func loneSurrogatesAreRefused() {
            #expect(parseError(#""\uD83D""#) == JSONParseError(offset: 7, reason: "a lone surrogate escape"))
            #expect(parseError(#""\uDE00""#) == JSONParseError(offset: 7, reason: "a lone surrogate escape"))
            #expect(parseError(#""\uD83D\u0041""#) == JSONParseError(offset: 13, reason: "a high surrogate without its low half"))
        }

        @Test func malformedObjectsAndArraysAreRefusedWhereTheyGoWrong() {
            #expect(parseError("{1:2}") == JSONParseError(offset: 1, reason: "expected a string key in an object"))
            #expect(parseError(#"{"a" 1}"#) == JSONParseError(offset: 5, reason: "expected ':' after a key"))
            #expect(parseError(#"{"a":1 "b":2}"#) == JSONParseError(offset: 7, reason: "expected ',' or '}' in an object"))
            #expect(parseError(#"{"a":1"#) == JSONParseError(offset: 6, reason: "unterminated object"))
            #expect(parseError(#"{"a":1,}"#) == JSONParseError(offset: 7, reason: "expected a string key in an object"))
            #expect(parseError("[1 2]") == JSONParseError(offset: 3, reason: "expected ',' or ']' in an array"))
            #expect(parseError("[1,]") == JSONParseError(offset: 3, reason: "expected a value"))
            #expect(parseError("[1") == JSONParseError(offset: 2, reason: "unterminated array"))
        }
    }

    // MARK: - Serialization

    @Suite struct Serialization {
        @Test func valuesAreWrittenCompactInTheirOrder() {
            let value: JSONValue = .object([
                (key: "z", value: 1),
                (key: "a", value: ["x", true, nil, .number("-2.5e3")]),
                (key: "o", value: .object([])),
            ])
            #expect(value.jsonText == #"{"z":1,"a":["x",true,null,-2.5e3],"o":{}}"#)
            #expect(JSONValue.array([]).jsonText == "[]")
            #expect(JSONValue.bool(false).jsonText == "false")
        }

        @Test func quotesBackslashesAndLineBreaksAreEscaped() {
            #expect(JSONValue.string("say \"hi\" \\ now").jsonText == #""say \"hi\" \\ now""#)
            #expect(JSONValue.string("a\nb\rc\td").jsonText == #""a\nb\rc\td""#)
            #expect(JSONValue.string("a\r\nb").jsonText == #""a\r\nb""#)
        }

        @Test func otherControlCharactersAndDeleteAreWrittenAsUnicodeEscapes() {
            #expect(JSONValue.string("\u{0}\u{1}\u{08}\u{0C}\u{1F}\u{7F}").jsonText == #""\u0000\u0001\u0008\u000c\u001f\u007f""#)
        }

        @Test func noControlCharacterSurvivesSoTheTextStaysOneLine() throws {
            let every = String(String.UnicodeScalarView((0..<0x20).map { Unicode.Scalar(UInt8($0)) }))
            let text = JSONValue.string(every).jsonText
            #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
            #expect(try parsed(text) == .string(every))
        }

        @Test func everythingElseIsWrittenAsIs() {
            #expect(JSONValue.string("a/b é 😀 \u{2028}").jsonText == "\"a/b é 😀 \u{2028}\"")
            #expect(JSONValue.object([(key: "ké\"y", value: "v")]).jsonText == #"{"ké\"y":"v"}"#)
        }

        @Test func aCompactLineRoundTripsExactly() throws {
            let line =
                #"{"ok":true,"id":24,"memberships":[{"id":"mem_1ymr6jcw5jqzv","status":"active","isActive":true,"expiresAt":null,"n":-2.5e3}],"s":"a\"b\\c\n"}"#
            #expect(try parsed(line).jsonText == line)
        }

        @Test func aValueRoundTripsThroughItsText() throws {
            let value: JSONValue = .object([
                (key: "text", value: .string("tab\there \u{1} \"quoted\" 😀")),
                (key: "list", value: [1, "two", [false, nil]]),
                (key: "empty", value: .object([])),
            ])
            #expect(try parsed(value.jsonText) == value)
        }

        @Test func literalsBuildValues() {
            let value: JSONValue = ["a", 1, true, nil]
            #expect(value == .array([.string("a"), .number("1"), .bool(true), .null]))
            #expect(value.jsonText == #"["a",1,true,null]"#)
        }

        @Test func equalityAndHashingRespectMemberOrder() {
            let ab = JSONValue.object([(key: "a", value: 1), (key: "b", value: 2)])
            let ba = JSONValue.object([(key: "b", value: 2), (key: "a", value: 1)])
            #expect(ab != ba)
            #expect(ab == .object([(key: "a", value: 1), (key: "b", value: 2)]))
            #expect(Set([ab, ba, ab]).count == 2)
            #expect(JSONValue.number("1") != JSONValue.number("1.0"))
            #expect(JSONValue.string("1") != JSONValue.number("1"))
        }
    }
}
