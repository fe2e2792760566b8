import EntitledCore
import NIOCore
import Testing

@testable import EntitledWire

/// `CompactGrantDecoder` reads the usual shape of a grant line and leaves every other line to the
/// general decoder, which must read the lines it takes the same way.
@Suite struct CompactGrantDecodingTests {
    private static func compact(_ line: String, _ permissions: OperationPermissions = .everything) -> CompactGrant? {
        CompactGrantDecoder.decode(line: ByteBuffer(string: line), permitting: permissions)
    }

    private static func general(_ line: String) -> DecodedRequest {
        RequestDecoder.decode(line: ByteBuffer(string: line))
    }

    /// Every field of the two grants (their descriptions name every stored property).
    private static func same(_ compact: Grant, _ general: Grant) -> Bool {
        String(reflecting: compact) == String(reflecting: general)
    }

    static let compactLines = [
        #"{"op":"grant","user":"000000012345","product":"prod_pro","source":"app_store","expiresAt":"2027-01-01T00:00:00Z"}"#,
        #"{"op":"grant","user":"u1","product":"prod_pro"}"#,
        #"{"op":"grant","device":"phone-1","product":"prod_pro","duration":"30d"}"#,
        #"{"op":"grant","user":"alice","device":"phone-1","product":"prod_pro","plan":"monthly","source":"stripe"}"#,
        #"{"op":"grant","product":"prod_pro","user":"alice","id":7}"#,
        #"{"op":"grant","user":"alice","product":"prod_pro","id":"req-1","source":"promotional"}"#,
        #"{"op":"grant","user":"alice","product":"prod_pro","expiresAt":"2026-12-21T01:30:00.250+01:30"}"#,
        #"{"op":"grant","user":"alice","product":"prod_pro","source":"play_store","duration":"12h"}"# + "\r",
        #"{"op":"grant","user":"a user with spaces !#$%&'()*+,-./:;<=>?@[]^_`{|}~","product":"prod_pro","source":"whop"}"#,
        #"{"op":"grant","user":"u","product":"prod_pro","source":"manual","expiresAt":"1970-01-01T00:00:00Z"}"#,
        #"{"op":"grant","user":""# + String(repeating: "u", count: Limits.maximumIdentifierBytes) + #"","product":"p"}"#,
    ]

    @Test(arguments: compactLines)
    func aCompactGrantLineReadsAsTheGeneralDecoderReadsIt(line: String) throws {
        let compact = try #require(Self.compact(line), "not read by the compact decoder")
        let decoded = Self.general(line)
        guard case .success(.grant(let grant, let reason)) = decoded.result else {
            Issue.record("the general decoder read \(decoded.result)")
            return
        }
        #expect(Self.same(compact.grant, grant), "\(compact.grant) against \(grant)")
        #expect(reason == nil)
        #expect(compact.id == decoded.id)
    }

    @Test func theGrantHoldsTheLinesValues() throws {
        let line = #"{"op":"grant","id":"r","device":"phone","user":"alice","product":"prod_pro","plan":"yearly","source":"stripe","expiresAt":"2027-01-01T00:00:00Z"}"#
        let compact = try #require(Self.compact(line))
        #expect(compact.grant.subject == Subject(user: "alice", device: "phone"))
        #expect(compact.grant.productId == "prod_pro")
        #expect(compact.grant.planId == "yearly")
        #expect(compact.grant.source == .stripe)
        #expect(compact.grant.expiry == .at(try #require(Timestamp(rfc3339: "2027-01-01T00:00:00Z"))))
        #expect(compact.grant.transaction == nil && compact.grant.idempotencyKey == nil)
        #expect(compact.id == ByteBuffer(string: #""r""#))
        #expect(try #require(Self.compact(#"{"op":"grant","user":"a","product":"p","duration":"2w"}"#)).grant.expiry == .after(.days(14)))
        #expect(try #require(Self.compact(#"{"op":"grant","user":"a","product":"p","duration":"1mo"}"#)).grant.expiry == .after(.months(1)))
        #expect(try #require(Self.compact(#"{"op":"grant","user":"a","product":"p","duration":"1y"}"#)).grant.expiry == .after(.years(1)))
        #expect(try #require(Self.compact(#"{"op":"grant","user":"a","product":"p"}"#)).grant.expiry == .lifetime)
        #expect(try #require(Self.compact(#"{"op":"grant","user":"a","product":"p"}"#)).grant.source == .default)
    }

    /// Each of these is left to the general decoder: most are refused there, with its message; the
    /// rest are valid grants in a shape the compact decoder does not read.
    static let otherLines = [
        #"{"op":"grant","user":"alice"}"#,  // no product
        #"{"op":"grant","product":"prod_pro"}"#,  // no subject
        #"{"op":"grant","user":"alice","product":"p","source":"itunes"}"#,  // unknown source
        #"{"op":"grant","user":"alice","product":"p","source":"App_Store"}"#,
        #"{"op":"grant","user":"alice","product":"p","expiresAt":"2027-02-30T00:00:00Z"}"#,  // no such day
        #"{"op":"grant","user":"alice","product":"p","expiresAt":"tomorrow"}"#,
        #"{"op":"grant","user":"alice","product":"p","duration":"0d"}"#,
        #"{"op":"grant","user":"alice","product":"p","duration":"1x"}"#,
        #"{"op":"grant","user":"alice","product":"p","duration":"1d","expiresAt":"2027-01-01T00:00:00Z"}"#,  // both
        #"{"op":"grant","user":"","product":"p"}"#,  // empty
        #"{"op":"grant","user":""# + String(repeating: "u", count: Limits.maximumIdentifierBytes + 1) + #"","product":"p"}"#,
        #"{"op":"grant","user":"alice","user":"bob","product":"p"}"#,  // repeated
        #"{"op":"grant","user":"alice","product":"p","product":"q"}"#,
        #"{"op":"grant","user":"alice","product":"p","reason":"support ticket 12"}"#,  // a field it leaves to the general decoder
        #"{"op":"grant","user":"alice","product":"p","willRenew":true}"#,
        #"{"op":"grant","user":"alice","product":"p","idempotencyKey":"k"}"#,
        #"{"op":"grant","user":"alice","product":"p","transactionId":"t"}"#,
        #"{"op":"grant","user":"alice","product":"p","prodcut":"q"}"#,  // unknown field: named by the general decoder
        #"{"op":"grant","user":"alice","product":"p","minSeq":3}"#,
        #"{"op":"grant","user":"al\"ice","product":"p"}"#,  // an escape
        #"{"op":"grant","user":"alé","product":"p"}"#,  // not ASCII
        #"{"op":"grant","user":null,"product":"p"}"#,
        #"{"op":"grant","user":7,"product":"p"}"#,
        #"{"op":"grant", "user":"alice","product":"p"}"#,  // whitespace
        #"{"user":"alice","op":"grant","product":"p"}"#,  // op not first
        #"{"op":"grant","user":"alice","product":"p"} "#,
        #"{"op":"grant","user":"alice","product":"p",}"#,
        #"{"op":"grant","user":"alice","product":"p","id":01}"#,  // not JSON
        #"{"op":"grant","user":"alice","product":"p","id":1,"id":2}"#,
        #"{"op":"grants","user":"alice","product":"p"}"#,
        #"{"op":"check","user":"alice","product":"p"}"#,
    ]

    @Test(arguments: otherLines)
    func anyOtherLineIsLeftToTheGeneralDecoder(line: String) {
        #expect(Self.compact(line) == nil)
    }

    @Test func aConnectionThatMayNotGrantIsLeftToTheGeneralDecodersRefusal() {
        let line = #"{"op":"grant","user":"alice","product":"prod_pro"}"#
        #expect(Self.compact(line, OperationPermissions(allowing: [.ping, .hello, .auth, .check], refusalCode: .forbidden)) == nil)
        #expect(Self.compact(line, OperationPermissions(allowing: [.grant], refusalCode: .forbidden)) != nil)
    }

    /// Compact lines with bytes replaced, inserted or removed: whatever the compact decoder still reads
    /// must read as the general decoder reads it.
    @Test func mutatedCompactLinesReadTheSameByBothDecodersWheneverTheCompactOneReadsThem() {
        let alphabet = Array(#"{}[]":,\ 0123456789-.:TZ+dhmswabcdeilnoprstuy_"#.utf8) + [0x00, 0x0A, 0x0D, 0x7F, 0xC3, 0xA9]
        var read = 0
        for bytes in LineMutations(of: Self.compactLines, alphabet: alphabet, rounds: 30_000, seed: 33) {
            guard let compact = CompactGrantDecoder.decode(line: ByteBuffer(bytes: bytes), permitting: .everything) else { continue }
            read += 1
            let decoded = RequestDecoder.decode(line: ByteBuffer(bytes: bytes))
            let text = String(decoding: bytes, as: UTF8.self)
            guard case .success(.grant(let grant, nil)) = decoded.result else {
                Issue.record("\(text): compact read a grant, general read \(decoded.result)")
                continue
            }
            #expect(Self.same(compact.grant, grant), "\(text)")
            #expect(compact.id == decoded.id, "\(text)")
        }
        #expect(read > 1_000, "too few mutated lines stayed compact to prove anything: \(read)")
    }
}
