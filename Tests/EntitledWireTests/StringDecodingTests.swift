import Testing

@testable import EntitledCore
@testable import EntitledWire

/// Strings decode to the text they stand for; unknown fields are refused; `null` means absent.
@Suite struct StringDecodingTests {
    private func user(_ line: String) throws -> String? {
        try #require(try request(line).accessQuery).subject.user
    }

    @Test func escapesInAStringDecodeToTheirCharacters() throws {
        #expect(try user(#"{"op":"check","user":"a\nb"}"#) == "a\nb")
        #expect(try user(#"{"op":"check","user":"say \"hi\""}"#) == "say \"hi\"")
        #expect(try user(#"{"op":"check","user":"back\\slash"}"#) == "back\\slash")
        #expect(try user(#"{"op":"check","user":"caf\u00e9"}"#) == "café")
        #expect(try user(#"{"op":"check","user":"caf\u00E9"}"#) == "café")
        #expect(try user(#"{"op":"check","user":"\/\b\f\r\t"}"#) == "/\u{08}\u{0C}\r\t")
        #expect(try user(#"{"op":"check","user":"\u0041\u0000z"}"#) == "A\u{0}z")
    }

    @Test func aSurrogatePairEscapeDecodesToOneEmoji() throws {
        #expect(try user(#"{"op":"check","user":"\ud83d\ude00"}"#) == "😀")
        #expect(try user(#"{"op":"check","user":"x\uD83D\uDE00y"}"#) == "x😀y")
    }

    @Test func nonASCIIUTF8PassesThroughUnchanged() throws {
        #expect(try user(#"{"op":"check","user":"Zoë 😀 日本語"}"#) == "Zoë 😀 日本語")
        #expect(try user(#"{"op":"check","user":"Zoë\n😀"}"#) == "Zoë\n😀")  // with an escape: the slow path
        let grant = try #require(try request(#"{"op":"grant","device":"télé","product":"prod_ü","plan":"plan_€"}"#).grant)
        #expect(grant.subject == .device("télé"))
        #expect(grant.productId == "prod_ü")
        #expect(grant.planId == "plan_€")
    }

    @Test func escapedKeysNameTheirFields() throws {
        #expect(try user(#"{"\u006fp":"check","us\u0065r":"alice"}"#) == "alice")
    }

    @Test func anEscapedOpNamesItsOperation() throws {
        #expect(try user(#"{"op":"\u0063heck","user":"alice"}"#) == "alice")
        let error = try failure(#"{"op":"ch\u00e9ck"}"#)
        #expect(error.code == .unknownOp)
        #expect(error.message.hasPrefix("unknown op \"chéck\""))
    }

    @Test func anUnknownFieldIsRefusedWhateverItsValue() throws {
        let error = try failure(
            #"{"v":2,"op":"check","trace":{"span":[1,{"deep":[true,false,null]}],"s":"x\"y"},"user":"alice","n":-1.5e-3,"list":[],"obj":{}}"#
        )
        #expect(error.code == .badRequest)
        #expect(error.message.hasPrefix(#"unknown field "v""#))
    }

    @Test func keysDifferingOnlyInCaseAreUnknownFields() throws {
        let error = try failure(#"{"op":"check","user":"alice","User":"bob","PRODUCT":"p"}"#)
        #expect(error.message == #"unknown field "User" (did you mean "user"?)"#)
    }

    @Test func nullForAnOptionalFieldMeansAbsent() throws {
        let grant = try #require(
            try request(
                #"{"op":"grant","user":"alice","device":null,"product":"p","plan":null,"source":null,"expiresAt":null,"duration":"30d"}"#
            ).grant)
        #expect(grant.subject == .user("alice"))
        #expect(grant.planId == nil)
        #expect(grant.source == .manual)
        #expect(grant.expiry == .after(.days(30)))

        let query = try #require(
            try request(#"{"op":"check","device":"phone","product":null,"entitlement":"pro","at":null}"#).accessQuery)
        #expect(query.filter == .entitlement("pro"))
        #expect(query.moment == nil)

        guard case .revoke(_, let reason) = try request(#"{"op":"revoke","membership":"mem_x","reason":null}"#) else {
            Issue.record("not a revoke")
            return
        }
        #expect(reason == nil)
    }
}
