import EntitledCore
import NIOCore
import Testing

@testable import EntitledWire

/// `CompactCheckDecoder` reads the usual shape of a check line and leaves every other line to the
/// general decoder, which must read the lines it takes the same way.
@Suite struct CompactCheckDecodingTests {
    private static func compact(_ line: String, _ permissions: OperationPermissions = .everything) -> CompactCheck? {
        CompactCheckDecoder.decode(line: ByteBuffer(string: line), permitting: permissions)
    }

    private static func general(_ line: String) -> DecodedRequest {
        RequestDecoder.decode(line: ByteBuffer(string: line))
    }

    static let compactLines = [
        #"{"op":"check","user":"000000012345","entitlement":"pro"}"#,
        #"{"op":"check","user":"u1","product":"prod_pro"}"#,
        #"{"op":"check","device":"phone-1","user":"alice","entitlement":"pro"}"#,
        #"{"op":"check","entitlement":"pro","device":"phone-1"}"#,
        #"{"op":"check","user":"alice"}"#,
        #"{"op":"check","id":7,"user":"alice","entitlement":"pro"}"#,
        #"{"op":"check","user":"alice","entitlement":"pro","id":"req-1"}"#,
        #"{"op":"check","user":"alice","id":-0}"#,
        #"{"op":"check","user":"alice","entitlement":"pro"}"# + "\r",
        #"{"op":"check","user":"a user with spaces and symbols !#$%&'()*+,-./:;<=>?@[]^_`{|}~","entitlement":"pro"}"#,
        #"{"op":"check","user":""# + String(repeating: "u", count: Limits.maximumIdentifierBytes) + #""}"#,
    ]

    @Test(arguments: compactLines)
    func aCompactCheckLineReadsAsTheGeneralDecoderReadsIt(line: String) throws {
        let compact = try #require(Self.compact(line), "not read by the compact decoder")
        let decoded = Self.general(line)
        guard case .success(.check(let query)) = decoded.result else {
            Issue.record("the general decoder read \(decoded.result)")
            return
        }
        #expect(compact.query.subject == query.subject)
        #expect(compact.query.filter == query.filter)
        #expect(compact.query.moment == nil && query.moment == nil)
        #expect(compact.id == decoded.id)
    }

    @Test func theQueryHoldsTheLinesValues() throws {
        let check = try #require(Self.compact(#"{"op":"check","id":"r","device":"phone","user":"alice","product":"prod_pro"}"#))
        #expect(check.query.subject == Subject(user: "alice", device: "phone"))
        #expect(check.query.filter == .product("prod_pro"))
        #expect(check.id == ByteBuffer(string: #""r""#))
    }

    /// Each of these is left to the general decoder: most are refused there, with its message; the
    /// rest are valid checks in a shape the compact decoder does not read.
    static let otherLines = [
        #"{"op":"check"}"#,  // no subject: the general decoder's bad_request
        #"{"op":"check","user":"alice","product":"p","entitlement":"e"}"#,  // both filters
        #"{"op":"check","user":""}"#,  // empty
        #"{"op":"check","user":""# + String(repeating: "u", count: Limits.maximumIdentifierBytes + 1) + #""}"#,  // too long
        #"{"op":"check","user":"alice","user":"bob"}"#,  // repeated
        #"{"op":"check","user":"alice","usr":"bob"}"#,  // unknown field: named by the general decoder
        #"{"op":"check","user":"alice","at":"2026-01-01T00:00:00Z"}"#,  // a moment
        #"{"op":"check","user":"alice","minSeq":3}"#,  // a change number
        #"{"op":"check","user":"al\"ice"}"#,  // an escape
        #"{"op":"check","user":"al\u00e9"}"#,
        #"{"op":"check","user":"alé"}"#,  // not ASCII
        #"{"op":"check","user":null}"#,
        #"{"op":"check","user":7}"#,
        #"{"op":"check", "user":"alice"}"#,  // whitespace
        #"{"user":"alice","op":"check"}"#,  // op not first
        #"{"op":"check","user":"alice"} "#,
        #"{"op":"check","user":"alice"}x"#,
        #"{"op":"check","user":"alice",}"#,
        #"{"op":"check","user":"alice""#,
        #"{"op":"check","user":"alice","id":01}"#,  // not JSON
        #"{"op":"check","user":"alice","id":1.5}"#,
        #"{"op":"check","user":"alice","id":{"a":1}}"#,
        #"{"op":"check","user":"alice","id":1,"id":2}"#,
        #"{"op":"checks","user":"alice"}"#,
    ]

    @Test(arguments: otherLines)
    func anyOtherLineIsLeftToTheGeneralDecoder(line: String) {
        #expect(Self.compact(line) == nil)
    }

    @Test func aConnectionThatMayNotCheckIsLeftToTheGeneralDecodersRefusal() {
        let line = #"{"op":"check","user":"alice","entitlement":"pro"}"#
        let refusing = OperationPermissions(allowing: [.ping, .hello, .auth], refusalCode: .unauthorized)
        #expect(Self.compact(line, refusing) == nil)
        #expect(Self.compact(line, OperationPermissions(allowing: [.check], refusalCode: .forbidden)) != nil)
    }

    /// Compact lines with bytes replaced, inserted or removed: whatever the compact decoder still reads
    /// must read as the general decoder reads it.
    @Test func mutatedCompactLinesReadTheSameByBothDecodersWheneverTheCompactOneReadsThem() {
        let alphabet = Array(#"{}[]":,\ 0123456789-.eEabcdiklnoprstuvy"#.utf8) + [0x00, 0x0A, 0x0D, 0x7F, 0xC3, 0xA9]
        var read = 0
        for bytes in LineMutations(of: Self.compactLines, alphabet: alphabet, rounds: 30_000, seed: 22) {
            guard let compact = CompactCheckDecoder.decode(line: ByteBuffer(bytes: bytes), permitting: .everything) else { continue }
            read += 1
            let decoded = RequestDecoder.decode(line: ByteBuffer(bytes: bytes))
            let text = String(decoding: bytes, as: UTF8.self)
            guard case .success(.check(let query)) = decoded.result else {
                Issue.record("\(text): compact read a check, general read \(decoded.result)")
                continue
            }
            #expect(compact.query.subject == query.subject, "\(text)")
            #expect(compact.query.filter == query.filter, "\(text)")
            #expect(compact.id == decoded.id, "\(text)")
        }
        #expect(read > 1_000, "too few mutated lines stayed compact to prove anything: \(read)")
    }

    private static func userOfCheck(_ line: String) -> String? {
        var line = line
        return line.withUTF8 { bytes in
            CompactCheckDecoder.userOfCheck(onLine: UnsafeRawBufferPointer(bytes)).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    @Test func theUserOfACheckWrittenTheUsualWayIsSeenWithoutDecoding() {
        #expect(Self.userOfCheck(#"{"op":"check","user":"alice","entitlement":"pro"}"#) == "alice")
        #expect(Self.userOfCheck(#"{"op":"check","user":"alice"}"# + "\r") == "alice")
        // A look, not a decode: a user the decoder would refuse is still given, an unusual shape is not.
        #expect(Self.userOfCheck(#"{"op":"check","user":"a\"b"}"#) == #"a\"#)
        #expect(Self.userOfCheck(#"{"op":"check","entitlement":"pro","user":"alice"}"#) == nil)
        #expect(Self.userOfCheck(#"{"op":"grant","user":"alice","product":"p"}"#) == nil)
        #expect(Self.userOfCheck(#"{"op":"check","user":"alice"#) == nil)  // no closing quote
        #expect(Self.userOfCheck(#"{"op":"check","user":""#) == nil)
    }

    @Test func theUserOfAGrantWrittenTheUsualWayIsSeenWithoutDecoding() {
        func userOfGrant(_ line: String) -> String? {
            var line = line
            return line.withUTF8 { bytes in
                GrantLineHead.user(onLine: UnsafeRawBufferPointer(bytes)).map { String(decoding: $0, as: UTF8.self) }
            }
        }
        #expect(userOfGrant(#"{"op":"grant","user":"000000000042","product":"prod_pro"}"#) == "000000000042")
        #expect(userOfGrant(#"{"op":"grant","product":"prod_pro","user":"alice"}"#) == nil)
        #expect(userOfGrant(#"{"op":"check","user":"alice","entitlement":"pro"}"#) == nil)
        #expect(userOfGrant(#"{"op":"grant","user":"alice"#) == nil)  // no closing quote
    }
}

