import NIOCore
import Testing

@testable import EntitledCore
@testable import EntitledWire

/// Valid JSON that is not a valid request is refused with `bad_request`, and the message names the field.
@Suite struct BadRequestTests {
    @Test func aJSONValueThatIsNotAnObjectIsABadRequest() throws {
        for line in [#"[{"op":"ping"}]"#, #""ping""#, "5", "null", "true", "[]"] {
            try expectBadRequest(line, mentioning: "JSON object")
        }
    }

    @Test func aRequestWithoutOpIsABadRequestNamingOp() throws {
        try expectBadRequest("{}", mentioning: #""op""#, "required")
        try expectBadRequest(#"{"user":"alice"}"#, mentioning: #""op""#, "required")
        try expectBadRequest(#"{"op":null}"#, mentioning: #""op""#, "required")
    }

    @Test func anOpThatIsNotAStringIsABadRequestNamingOp() throws {
        try expectBadRequest(#"{"op":5}"#, mentioning: #"field "op" must be a string"#)
        try expectBadRequest(#"{"op":["ping"]}"#, mentioning: #"field "op" must be a string"#)
        try expectBadRequest(#"{"op":true}"#, mentioning: #"field "op" must be a string"#)
    }

    @Test func aFieldOfTheWrongTypeIsABadRequestNamingTheField() throws {
        try expectBadRequest(#"{"op":"check","user":5}"#, mentioning: #"field "user" must be a string"#)
        try expectBadRequest(#"{"op":"check","device":{"id":"phone"}}"#, mentioning: #"field "device" must be a string"#)
        try expectBadRequest(#"{"op":"check","user":"u","at":1797811200}"#, mentioning: #"field "at" must be a string"#)
        try expectBadRequest(#"{"op":"revoke","membership":false}"#, mentioning: #"field "membership" must be a string"#)
    }

    @Test func aFieldGivenTwiceIsABadRequestNamingTheField() throws {
        try expectBadRequest(#"{"op":"check","user":"alice","user":"bob"}"#, mentioning: #"field "user" appears more than once"#)
        try expectBadRequest(#"{"op":"ping","op":"ping"}"#, mentioning: #"field "op" appears more than once"#)
        try expectBadRequest(#"{"op":"ping","id":1,"id":2}"#, mentioning: #"field "id" appears more than once"#)
    }

    @Test func anEmptyUserIsABadRequestNamingUser() throws {
        try expectBadRequest(#"{"op":"check","user":""}"#, mentioning: #"field "user" must not be empty"#)
        try expectBadRequest(#"{"op":"check","device":""}"#, mentioning: #"field "device" must not be empty"#)
        try expectBadRequest(#"{"op":"grant","user":"u","product":""}"#, mentioning: #"field "product" must not be empty"#)
    }

    @Test func aUserOf257BytesIsABadRequestAnd256BytesIsAccepted() throws {
        let accepted = try #require(try request(#"{"op":"check","user":"\#(String(repeating: "a", count: 256))"}"#).accessQuery)
        #expect(accepted.subject.user?.utf8.count == 256)
        try expectBadRequest(
            #"{"op":"check","user":"\#(String(repeating: "a", count: 257))"}"#,
            mentioning: #"field "user""#, "at most 256 bytes")
    }

    @Test func theIdentifierLimitCountsUTF8BytesNotCharacters() throws {
        // "é" is two bytes in UTF-8: 128 of them are 256 bytes, 129 are 258.
        let accepted = try #require(try request(#"{"op":"check","device":"\#(String(repeating: "é", count: 128))"}"#).accessQuery)
        #expect(accepted.subject.device?.count == 128)
        try expectBadRequest(
            #"{"op":"check","device":"\#(String(repeating: "é", count: 129))"}"#,
            mentioning: #"field "device""#, "256 bytes")
    }

    @Test func bothProductAndEntitlementInACheckIsABadRequest() throws {
        try expectBadRequest(#"{"op":"check","user":"u","product":"p","entitlement":"pro"}"#, mentioning: #""product""#, #""entitlement""#)
    }

    @Test func bothExpiresAtAndDurationInAGrantIsABadRequest() throws {
        try expectBadRequest(
            #"{"op":"grant","user":"u","product":"p","expiresAt":"2026-12-21T00:00:00Z","duration":"30d"}"#,
            mentioning: #""expiresAt""#, #""duration""#)
    }

    @Test func aBadDurationIsABadRequestNamingDuration() throws {
        for duration in ["30 days", "0d", "-1d", "1.5d", "30D", "30", "", "1month", "1001y", "12001mo"] {
            let error = try failure(#"{"op":"grant","user":"u","product":"p","duration":"\#(duration)"}"#)
            #expect(error.code == .badRequest)
            #expect(error.message.contains(#"field "duration""#), "\(error.message)")
        }
        try expectBadRequest(
            #"{"op":"grant","user":"u","product":"p","duration":"1 month"}"#, mentioning: "s, min, h, d, w, mo or y", #""1mo""#
        )
    }

    @Test func aDurationInMIsRefusedNamingMinutesAndMonths() throws {
        // "m" was minutes once; read as months by a support agent granting "a month", it gave a minute.
        try expectBadRequest(#"{"op":"grant","user":"u","product":"p","duration":"15m"}"#, mentioning: #""15min""#, #""15mo""#, "ambiguous")
    }

    @Test func aBadTimeIsABadRequestNamingTheField() throws {
        try expectBadRequest(#"{"op":"check","user":"u","at":"tomorrow"}"#, mentioning: #"field "at""#, "RFC 3339")
        try expectBadRequest(#"{"op":"memberships","user":"u","at":"2026-12-21"}"#, mentioning: #"field "at""#)
        try expectBadRequest(
            #"{"op":"grant","user":"u","product":"p","expiresAt":"2026-02-30T00:00:00Z"}"#,
            mentioning: #"field "expiresAt""#, "RFC 3339")
    }

    @Test func anUnknownSourceIsABadRequestListingTheSources() throws {
        try expectBadRequest(
            #"{"op":"grant","user":"u","product":"p","source":"paypal"}"#,
            mentioning: #"field "source""#, "app_store", "play_store", "stripe", "whop", "manual", "promotional")
        try expectBadRequest(#"{"op":"grant","user":"u","product":"p","source":"App_Store"}"#, mentioning: #"field "source""#)
    }

    @Test func defineWithoutProductsIsABadRequestNamingProducts() throws {
        try expectBadRequest(#"{"op":"define","entitlement":"pro"}"#, mentioning: #"field "products" is required for define"#)
        try expectBadRequest(#"{"op":"define","entitlement":"pro","products":null}"#, mentioning: #"field "products""#)
    }

    @Test func aProductsArrayWithANonStringIsABadRequestNamingProducts() throws {
        try expectBadRequest(
            #"{"op":"define","entitlement":"pro","products":["prod_a",5]}"#,
            mentioning: #"field "products" must be an array of strings"#)
        try expectBadRequest(
            #"{"op":"define","entitlement":"pro","products":[["prod_a"]]}"#,
            mentioning: #"field "products" must be an array of strings"#)
        try expectBadRequest(
            #"{"op":"define","entitlement":"pro","products":"prod_a"}"#,
            mentioning: #"field "products" must be an array of strings"#)
    }

    @Test func anEmptyOrOverlongProductInDefineIsABadRequestNamingProducts() throws {
        try expectBadRequest(#"{"op":"define","entitlement":"pro","products":["prod_a",""]}"#, mentioning: #""products""#)
        try expectBadRequest(
            #"{"op":"define","entitlement":"pro","products":["\#(String(repeating: "p", count: 257))"]}"#,
            mentioning: #""products""#, "256")
        guard case .define(_, let products, _) = try request(
            #"{"op":"define","entitlement":"pro","products":["\#(String(repeating: "p", count: 256))"]}"#)
        else {
            Issue.record("not a define")
            return
        }
        #expect(products.first?.utf8.count == 256)
    }

    @Test func defineWithMoreThanAThousandProductsIsABadRequestNamingProducts() throws {
        let tooMany = (0...Limits.maximumProductsPerEntitlement).map { "\"p\($0)\"" }.joined(separator: ",")
        try expectBadRequest(#"{"op":"define","entitlement":"pro","products":[\#(tooMany)]}"#, mentioning: #"field "products""#)
    }

    @Test func defineWithoutEntitlementIsABadRequestNamingEntitlement() throws {
        try expectBadRequest(#"{"op":"define","products":["p"]}"#, mentioning: #"field "entitlement" is required for define"#)
    }

    @Test func aGrantWithoutProductIsABadRequestNamingProduct() throws {
        try expectBadRequest(#"{"op":"grant","user":"u"}"#, mentioning: #"field "product" is required for grant"#)
    }

    @Test func anOperationWithoutUserOrDeviceIsABadRequestNamingBoth() throws {
        for (op, field) in [("grant", #""product":"p""#), ("check", #""product":"p""#), ("memberships", #""at":null"#)] {
            try expectBadRequest(#"{"op":"\#(op)",\#(field)}"#, mentioning: op, #""user""#, #""device""#)
        }
        try expectBadRequest(#"{"op":"check","user":null,"device":null}"#, mentioning: #""user""#, #""device""#)
    }

    @Test func aClaimNeedsBothDeviceAndUser() throws {
        try expectBadRequest(#"{"op":"claim","user":"u"}"#, mentioning: #"field "device" is required for claim"#)
        try expectBadRequest(#"{"op":"claim","device":"d"}"#, mentioning: #"field "user" is required for claim"#)
    }

    @Test func aRevokeWithoutMembershipIsABadRequestNamingMembership() throws {
        try expectBadRequest(#"{"op":"revoke","reason":"refund"}"#, mentioning: #"field "membership" is required for revoke"#)
        try expectBadRequest(#"{"op":"revoke","membership":"m","reason":""}"#, mentioning: #"field "reason""#)
        try expectBadRequest(
            #"{"op":"revoke","membership":"m","reason":"\#(String(repeating: "r", count: 257))"}"#,
            mentioning: #"field "reason""#)
    }

    @Test func aWrongTypeIsReportedOnlyAfterTheWholeLineIsFoundToBeValidJSON() throws {
        try expectBadJSON(#"{"op":"check","user":5,"#)
    }

    @Test func aBadRequestStillEchoesTheID() throws {
        let decoded = decode(#"{"op":"check","id":"r1"}"#)
        #expect(decoded.id.map { String(buffer: $0) } == #""r1""#)
        #expect(try failure(of: decoded).code == .badRequest)
    }
}

@Suite struct UnknownOpTests {
    @Test func anUnknownOpIsRefusedWithUnknownOpListingTheKnownOps() throws {
        let error = try failure(#"{"op":"fly","user":"u"}"#)
        #expect(error.code == .unknownOp)
        #expect(error.message.contains(#""fly""#))
        for op in ["ping", "grant", "check", "claim", "revoke", "memberships", "define", "catalog", "snapshot"] {
            #expect(error.message.contains(op), "\(error.message) lacks \(op)")
        }
    }

    @Test func anUnknownOpIsReportedBeforeProblemsWithItsFields() throws {
        #expect(try failure(#"{"op":"fly","user":5,"device":""}"#).code == .unknownOp)
        // An op of the wrong type is what there is to report.
        let wrongType = try failure(#"{"op":7,"user":"u"}"#)
        #expect(wrongType.code == .badRequest)
        #expect(wrongType.message.contains(#"field "op" must be a string"#))
    }

    @Test func aMissingOpIsReportedBeforeProblemsWithOtherFields() throws {
        let error = try failure(#"{"user":5}"#)
        #expect(error.code == .badRequest)
        #expect(error.message.contains(#"field "op" is required"#))
    }

    @Test func anUnknownOpMadeOfCombiningMarksIsShortenedInTheMessage() throws {
        // One Character, 20,001 Unicode scalars: the message must not carry them all.
        let op = "a" + String(repeating: "\u{0301}", count: 20_000)
        let error = try failure(#"{"op":"\#(op)"}"#)
        #expect(error.code == .unknownOp)
        #expect(error.message.utf8.count < 400)
    }

    @Test func opNamesAreCaseSensitive() throws {
        #expect(try failure(#"{"op":"PING"}"#).code == .unknownOp)
        #expect(try failure(#"{"op":""}"#).code == .unknownOp)
    }

    @Test func aVeryLongUnknownOpIsShortenedInTheMessage() throws {
        let op = String(repeating: "x", count: 10_000)
        let error = try failure(#"{"op":"\#(op)"}"#)
        #expect(error.code == .unknownOp)
        #expect(error.message.utf8.count < 400)
    }
}
