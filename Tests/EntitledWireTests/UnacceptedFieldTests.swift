import NIOCore
import Testing

@testable import EntitledCore
@testable import EntitledWire

/// A field an operation does not take, known or not, is refused with `bad_request` naming it, so that a
/// misspelling never changes what a request means (issue 20, section 1).
@Suite struct UnacceptedFieldTests {
    @Test func aMisspeltEntitlementInACheckIsRefusedWithTheFieldMeant() throws {
        let error = try failure(#"{"op":"check","user":"alice","entitlment":"pro"}"#)
        #expect(error.code == .badRequest)
        #expect(error.message == #"unknown field "entitlment" (did you mean "entitlement"?)"#)
    }

    @Test func aMisspeltDurationInAGrantIsRefusedWithTheFieldMeant() throws {
        try expectBadRequest(
            #"{"op":"grant","user":"bob","product":"pro","duraton":"P1M"}"#,
            mentioning: #"unknown field "duraton" (did you mean "duration"?)"#
        )
    }

    @Test func everyWriteRefusesAMisspeltFieldWithTheFieldMeant() throws {
        let cases: [(line: String, typo: String, meant: String)] = [
            (#"{"op":"grant","user":"bob","product":"p","expiresAt":"2030-01-01T00:00:00Z","idempotencyKy":"k"}"#, "idempotencyKy", "idempotencyKey"),
            (#"{"op":"claim","device":"d","usr":"bob"}"#, "usr", "user"),
            (#"{"op":"revoke","membership":"mem_x","reson":"refund"}"#, "reson", "reason"),
            (#"{"op":"define","entitlement":"pro","product":["p"]}"#, "product", "products"),
            (#"{"op":"event","membership":"mem_x","type":"renewal","eventId":"e","eventTime":"2030-01-01T00:00:00Z","expires_at":"2030-02-01T00:00:00Z"}"#, "expires_at", "expiresAt"),
        ]
        for (line, typo, meant) in cases {
            let error = try failure(line)
            #expect(error.code == .badRequest, "\(line)")
            // `product` is a known field `define` does not take: refused as unused, naming what define takes.
            if typo == "product" {
                #expect(error.message.contains(#"field "product" is not used by define"#), "\(error.message)")
                #expect(error.message.contains(meant), "\(error.message)")
            } else {
                #expect(error.message == #"unknown field "\#(typo)" (did you mean "\#(meant)"?)"#, "\(error.message)")
            }
        }
    }

    @Test func aKnownFieldTheOperationDoesNotUseIsRefusedNamingIt() throws {
        let error = try failure(#"{"op":"check","user":"alice","entitlement":"pro","duration":"30d"}"#)
        #expect(error.code == .badRequest)
        #expect(error.message == #"field "duration" is not used by check; check takes user, device, product, entitlement, at, minSeq (and id)"#)
        try expectBadRequest(#"{"op":"ping","product":"p"}"#, mentioning: #"field "product" is not used by ping"#, "no field besides op and id")
    }

    @Test func anUnknownFieldFarFromEveryKnownOneListsWhatTheOperationTakes() throws {
        try expectBadRequest(
            #"{"op":"revoke","membership":"mem_x","trace":{"span":1}}"#,
            mentioning: #"unknown field "trace"; revoke takes membership, reason (and id)"#
        )
    }

    @Test func theSuggestionPrefersTheFieldsOfTheOperation() throws {
        // `products` (one edit) is taken by define; from a check, `product` is meant.
        try expectBadRequest(#"{"op":"check","user":"a","prodct":"p"}"#, mentioning: #"did you mean "product""#)
        try expectBadRequest(#"{"op":"define","entitlement":"e","productz":["p"]}"#, mentioning: #"did you mean "products""#)
        // Case and snake case find their field.
        try expectBadRequest(#"{"op":"check","User":"a"}"#, mentioning: #"unknown field "User" (did you mean "user"?)"#)
        try expectBadRequest(#"{"op":"ping","ID":1}"#, mentioning: #"did you mean "id""#)
        try expectBadRequest(#"{"op":"grant","user":"a","product":"p","idempotency_key":"k"}"#, mentioning: #"did you mean "idempotencyKey""#)
    }

    @Test func idIsAcceptedByEveryOperation() throws {
        for operation in Request.Operation.allCases {
            #expect(operation.acceptedFields & RequestField.id.bit != 0, "\(operation)")
            #expect(operation.acceptedFields & RequestField.op.bit != 0, "\(operation)")
        }
        #expect(try request(#"{"op":"catalog","id":{"any":["json"]}}"#).op == .catalog)
    }

    @Test func theFirstUnknownKeyIsNamedAndItsEscapesAreDecoded() throws {
        try expectBadRequest(#"{"op":"check","user":"a","\u0078y":1,"zz":2}"#, mentioning: #"unknown field "xy""#)
    }

    @Test func anUnknownKeyIsReportedBeforeAWrongTypeOrAMissingField() throws {
        try expectBadRequest(#"{"op":"grant","user":5,"duraton":"30d"}"#, mentioning: #"unknown field "duraton""#)
        try expectBadRequest(#"{"op":"revoke","membershp":"mem_x"}"#, mentioning: #"did you mean "membership""#)
    }

    @Test func invalidJSONAndAnUnknownOpComeBeforeAnUnknownField() throws {
        try expectBadJSON(#"{"op":"check","entitlment":"pro""#)
        #expect(try failure(#"{"op":"chek","entitlment":"pro"}"#).code == .unknownOp)
        try expectBadRequest(#"{"entitlment":"pro"}"#, mentioning: #""op""#, "required")
    }

    @Test func anOperationTheConnectionMayNotRunIsRefusedBeforeItsFieldsAreLooked() throws {
        let permissions = OperationPermissions(allowing: [.ping, .hello, .auth], refusalCode: .unauthorized)
        let line = ByteBuffer(string: #"{"op":"grant","user":"bob","product":"pro","duraton":"P1M"}"#)
        let decoded = RequestDecoder.decode(line: line, permitting: permissions)
        #expect(try failure(of: decoded).code == .unauthorized)
        // `auth` names an unknown field by its key only: no value can be quoted back.
        let auth = try failure(#"{"op":"auth","tokn":"secret-secret-secret"}"#)
        #expect(auth.message == #"unknown field "tokn" (did you mean "token"?)"#)
    }

    @Test func theAcceptedFieldsAreWhatEachOperationReads() throws {
        #expect(Request.Operation.check.acceptedFieldNames == ["user", "device", "product", "entitlement", "at", "minSeq"])
        #expect(
            Request.Operation.memberships.acceptedFieldNames == [
                "user", "device", "source", "at", "transactionId", "originalTransactionId", "limit", "minSeq", "after", "endedAfter",
            ]
        )
        #expect(Request.Operation.history.acceptedFieldNames == ["user", "device", "entitlement", "limit", "erasures", "after"])
        #expect(Request.Operation.customer.acceptedFieldNames == ["user", "device", "minSeq"])
        #expect(Request.Operation.ping.acceptedFieldNames == [])
        #expect(Request.Operation.define.acceptedFieldNames == ["entitlement", "reason", "products"])
        #expect(Request.Operation.auth.acceptedFieldNames == ["token"])
        // Every operation takes only known fields, and at least `op` and `id`.
        let everyField = RequestField.allCases.reduce(UInt64(0)) { $0 | $1.bit }
        for operation in Request.Operation.allCases {
            #expect(operation.acceptedFields & ~everyField == 0, "\(operation)")
        }
    }

    @Test func helloListsTheFieldsOfEveryOperation() throws {
        let line = encode(.hello(protocolVersion: protocolVersion, server: "entitled test", operations: [.ping, .check], authRequired: false))
        #expect(line.contains(#""operations":["ping","check"]"#))
        #expect(line.contains(#""fields":{"ping":[],"check":["user","device","product","entitlement","at","minSeq"]}"#))
        let object = try parseJSONObject(line)
        #expect(object["protocol"] as? Int == 5)
    }
}
