import Foundation
import NIOCore
import Testing

@testable import EntitledCore
@testable import EntitledWire

/// The exact bytes of response lines.
@Suite struct ResponseEncodingTests {
    static let created = Timestamp(millisecondsSinceEpoch: 1_780_315_200_000)  // 2026-06-01T12:00:00Z
    static let december21 = Timestamp(millisecondsSinceEpoch: 1_797_811_200_000)  // 2026-12-21T00:00:00Z

    static let guestMembership = Membership(
        id: MembershipID(rawValue: "mem_0k3n5q8r2t4v6"),
        productId: "prod_pro",
        device: "phone",
        createdAt: created,
        expiresAt: december21,
        source: .appStore
    )

    static let revokedLifetimeMembership = Membership(
        id: MembershipID(rawValue: "mem_abcdefghjkmnp"),
        productId: "prod_pro",
        planId: "plan_monthly",
        device: "phone",
        user: "alice",
        createdAt: created,
        expiresAt: nil,
        source: .stripe,
        revocation: Revocation(revokedAt: Timestamp(millisecondsSinceEpoch: 1_780_401_600_250), reason: "refund")
    )

    static let guestJSON =
        #"{"id":"mem_0k3n5q8r2t4v6","productId":"prod_pro","device":"phone","status":"active","isActive":true,"createdAt":"2026-06-01T12:00:00Z","expiresAt":"2026-12-21T00:00:00Z","source":"app_store","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}"#

    static let revokedJSON =
        #"{"id":"mem_abcdefghjkmnp","productId":"prod_pro","planId":"plan_monthly","user":"alice","device":"phone","status":"revoked","isActive":false,"createdAt":"2026-06-01T12:00:00Z","expiresAt":null,"source":"stripe","revokedAt":"2026-06-02T12:00:00.250Z","reason":"refund","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}"#

    @Test func aPongIsJustOK() {
        #expect(encode(.pong) == "{\"ok\":true}\n")
    }

    @Test func anActiveCheckWritesItsExpiryInUTC() {
        #expect(encode(.access(.active(until: Self.december21))) == #"{"ok":true,"active":true,"expiresAt":"2026-12-21T00:00:00Z"}"# + "\n")
        #expect(encode(.access(.active(until: Timestamp(millisecondsSinceEpoch: 1_797_811_200_250))))
            == #"{"ok":true,"active":true,"expiresAt":"2026-12-21T00:00:00.250Z"}"# + "\n")
    }

    @Test func anInactiveCheckWritesNoExpiry() {
        #expect(encode(.access(.inactive)) == #"{"ok":true,"active":false}"# + "\n")
    }

    @Test func aLifetimeCheckWritesANullExpiry() {
        #expect(encode(.access(.active(until: nil))) == #"{"ok":true,"active":true,"expiresAt":null}"# + "\n")
    }

    @Test func aCheckResponseEchoesTheID() {
        let id = ByteBuffer(string: #""c-1""#)
        #expect(encode(.access(.inactive), id: id) == #"{"ok":true,"id":"c-1","active":false}"# + "\n")
        #expect(encode(.access(.active(until: nil)), id: id) == #"{"ok":true,"id":"c-1","active":true,"expiresAt":null}"# + "\n")
        #expect(encode(.access(.active(until: Self.december21)), id: ByteBuffer(string: "[7,{}]"))
            == #"{"ok":true,"id":[7,{}],"active":true,"expiresAt":"2026-12-21T00:00:00Z"}"# + "\n")
    }

    @Test func aMembershipWhoseEveryTextNeedsSixBytesAByteIsWrittenWholeAndValid() throws {
        // The worst case the reservation is sized for: every byte of every text escaped as \u00XX.
        let control = String(repeating: "\u{01}", count: 256)
        let membership = Membership(
            id: MembershipID(rawValue: String(repeating: "\u{02}", count: 300)),
            productId: control, planId: control, device: control, user: control,
            createdAt: Self.created, expiresAt: Self.december21, source: .stripe,
            revocation: Revocation(revokedAt: Self.december21, reason: String(repeating: "\u{1F}", count: 1000))
        )
        let line = encode(.membership(membership, moment: Self.created))
        #expect(line.hasSuffix("}\n"))
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let decoded = try #require(object["membership"] as? [String: Any])
        #expect(decoded["productId"] as? String == control)
        #expect(decoded["reason"] as? String == String(repeating: "\u{1F}", count: 1000))
        #expect(decoded["id"] as? String == String(repeating: "\u{02}", count: 300))
    }

    @Test func aCheckResponseEchoesAnIDWithWhitespaceMinified() {
        let id = ByteBuffer(string: "{ \"n\" :\t[1, 2],\r\n\"s\": \"a b\" }")
        #expect(encode(.access(.inactive), id: id) == #"{"ok":true,"id":{"n":[1,2],"s":"a b"},"active":false}"# + "\n")
    }

    @Test func checkResponsesAppendToWhatTheBufferAlreadyHolds() {
        var buffer = ByteBuffer(string: "earlier\n")
        for _ in 0..<100 { ResponseEncoder.write(.access(.active(until: Self.december21)), id: nil, into: &buffer) }
        let lines = String(buffer: buffer).split(separator: "\n")
        #expect(lines.count == 101)
        #expect(lines.first == "earlier")
        #expect(lines.dropFirst().allSatisfy { $0 == #"{"ok":true,"active":true,"expiresAt":"2026-12-21T00:00:00Z"}"# })
    }

    @Test func aGuestMembershipObjectHasOnlyTheFieldsThatAreSet() {
        #expect(encode(.membership(Self.guestMembership, moment: Self.created))
            == #"{"ok":true,"membership":\#(Self.guestJSON)}"# + "\n")
    }

    @Test func aRevokedLifetimeMembershipHasPlanUserDeviceNullExpiryRevokedAtAndReason() {
        #expect(encode(.membership(Self.revokedLifetimeMembership, moment: Self.created))
            == #"{"ok":true,"membership":\#(Self.revokedJSON)}"# + "\n")
    }

    @Test func aWritesMembershipAnswerCarriesItsMinifiedIDAndSequenceAndAppendsToTheBuffer() {
        var buffer = ByteBuffer(string: "earlier\n")
        let id = ByteBuffer(string: "{ \"n\" :\t[1, 2] }")
        ResponseEncoder.write(.membership(Self.revokedLifetimeMembership, moment: Self.created), id: id, sequence: 18_446_744_073_709_551_615, into: &buffer)
        ResponseEncoder.write(.membership(Self.guestMembership, moment: Self.created), id: nil, sequence: nil, into: &buffer)
        #expect(String(buffer: buffer) == "earlier\n"
            + #"{"ok":true,"id":{"n":[1,2]},"seq":18446744073709551615,"membership":\#(Self.revokedJSON)}"# + "\n"
            + #"{"ok":true,"membership":\#(Self.guestJSON)}"# + "\n")
    }

    @Test func aMembershipsStatusIsComputedAtTheResponsesMoment() {
        let line = encode(.membership(Self.guestMembership, moment: Self.december21))
        #expect(line.contains(#""status":"expired","isActive":false"#))
        #expect(!line.contains("revokedAt"))
        #expect(!line.contains("reason"))
        let justBefore = encode(.membership(Self.guestMembership, moment: Self.december21.adding(TimeSpan(milliseconds: -1))))
        #expect(justBefore.contains(#""status":"active","isActive":true"#))
    }

    @Test func aMembershipObjectCarriesTheProtocolsRequiredFields() throws {
        let parsed = try parseJSONObject(encode(.membership(Self.guestMembership, moment: Self.created)))
        let membership = try #require(parsed["membership"] as? [String: Any])
        let lifecycleKeys: Set<String> = ["willRenew", "periodType", "renewState", "renewsCount", "environment", "ownership", "grantType"]
        #expect(Set(membership.keys) == Set(["id", "productId", "device", "status", "isActive", "createdAt", "expiresAt", "source"]).union(lifecycleKeys))
        let revoked = try #require(
            try parseJSONObject(encode(.membership(Self.revokedLifetimeMembership, moment: Self.created)))["membership"]
                as? [String: Any])
        #expect(revoked["expiresAt"] is NSNull)
        #expect(Set(revoked.keys) == Set([
            "id", "productId", "planId", "user", "device", "status", "isActive", "createdAt", "expiresAt", "source",
            "revokedAt", "reason",
        ]).union(lifecycleKeys))
    }

    @Test func aMembershipsListIsAnArrayInTheGivenOrder() {
        #expect(encode(.memberships([Self.revokedLifetimeMembership, Self.guestMembership], moment: Self.created, next: nil))
            == #"{"ok":true,"memberships":[\#(Self.revokedJSON),\#(Self.guestJSON)]}"# + "\n")
        #expect(encode(.memberships([], moment: Self.created, next: nil)) == #"{"ok":true,"memberships":[]}"# + "\n")
    }

    @Test func aClaimWritesHowManyMoved() {
        #expect(encode(.claimed(2), id: ByteBuffer(string: "1")) == #"{"ok":true,"id":1,"claimed":2}"# + "\n")
        #expect(encode(.claimed(0)) == #"{"ok":true,"claimed":0}"# + "\n")
    }

    @Test func aDefineWritesTheEntitlementAndItsProducts() {
        #expect(encode(.defined(entitlement: "pro", products: ["prod_a", "prod_b"]))
            == #"{"ok":true,"entitlement":"pro","products":["prod_a","prod_b"]}"# + "\n")
    }

    @Test func aCatalogIsAnObjectFromEntitlementToProducts() {
        let catalog: [(entitlement: String, products: [String])] = [
            (entitlement: "basic", products: ["prod_basic"]),
            (entitlement: "empty", products: []),
            (entitlement: "pro", products: ["prod_pro_monthly", "prod_pro_yearly"]),
        ]
        #expect(encode(.catalog(catalog))
            == #"{"ok":true,"entitlements":{"basic":["prod_basic"],"empty":[],"pro":["prod_pro_monthly","prod_pro_yearly"]}}"# + "\n")
        #expect(encode(.catalog([])) == #"{"ok":true,"entitlements":{}}"# + "\n")
    }

    @Test func anErrorResponseHasCodeAndMessage() {
        let error = WireError(.notFound, StoreError.unknownMembership(MembershipID(rawValue: "mem_x")).message)
        #expect(encode(error) == #"{"ok":false,"error":{"code":"not_found","message":"no membership has the id \"mem_x\""}}"# + "\n")
        #expect(encode(error, id: ByteBuffer(string: "3"))
            == #"{"ok":false,"id":3,"error":{"code":"not_found","message":"no membership has the id \"mem_x\""}}"# + "\n")
    }

    @Test func errorCodesAreTheProtocols() {
        #expect(ErrorCode.allCases.map(\.rawValue) == [
            "bad_json", "bad_request", "unknown_op", "not_found", "conflict", "too_large", "unauthorized", "forbidden",
            "busy", "internal", "unavailable", "stale", "outcome_unknown", "over_limit", "loading", "truncated",
        ])
    }

    @Test func aLoadingAnswerSaysHowFarTheStartHasCome() {
        var buffer = ByteBuffer()
        ResponseEncoder.writeLoading(loaded: 5, total: 7, id: ByteBuffer(string: #""a""#), into: &buffer)
        #expect(
            String(buffer: buffer)
                == #"{"ok":false,"id":"a","error":{"code":"loading","message":"the server is starting and loading its data (5 of 7 memberships loaded); retry in a moment, on a new connection once it is ready","loaded":5,"total":7}}"#
                + "\n"
        )
        buffer.clear()
        ResponseEncoder.writeLoading(loaded: 0, total: 0, id: nil, into: &buffer)
        #expect(String(buffer: buffer).contains(#"how much there is to load is not known yet"#))
        #expect(String(buffer: buffer).hasSuffix(#""loaded":0,"total":0}}"# + "\n"))
    }

    @Test func quotesBackslashesAndControlCharactersAreEscapedSoTheLineIsValidJSON() throws {
        let awkward = "a\"b\\c\nd\re\tf\u{08}g\u{0C}h\u{01}i\u{1F}j\u{7F}k é😀"
        var membership = Self.guestMembership
        membership.productId = awkward
        membership.planId = "\n"
        membership.user = "\"\""
        membership.device = "\\"
        membership.revocation = Revocation(revokedAt: Self.december21, reason: "line1\nline2\u{0}")
        let line = encode(.membership(membership, moment: Self.created))

        #expect(line.contains(#""productId":"a\"b\\c\nd\re\tf\bg\fh\u0001i\u001fj"# + "\u{7F}" + #"k é😀""#))
        #expect(line.contains(#""planId":"\n""#))
        #expect(line.contains(#""user":"\"\"""#))
        #expect(line.contains(#""device":"\\""#))
        #expect(line.contains(#""reason":"line1\nline2\u0000""#))
        #expect(line.filter { $0 == "\n" }.count == 1)
        #expect(line.hasSuffix("}\n"))
        #expect(!line.unicodeScalars.dropLast().contains { $0.value < 0x20 })

        let parsed = try #require(try parseJSONObject(line)["membership"] as? [String: Any])
        #expect(parsed["productId"] as? String == awkward)
        #expect(parsed["planId"] as? String == "\n")
        #expect(parsed["user"] as? String == "\"\"")
        #expect(parsed["device"] as? String == "\\")
        #expect(parsed["reason"] as? String == "line1\nline2\u{0}")
    }

    @Test func aCatalogWithAwkwardNamesIsValidJSON() throws {
        let line = encode(.catalog([(entitlement: "a\"\n", products: ["p\\", "q\u{02}"])]))
        #expect(line.filter { $0 == "\n" }.count == 1)
        let entitlements = try #require(try parseJSONObject(line)["entitlements"] as? [String: Any])
        #expect(entitlements["a\"\n"] as? [String] == ["p\\", "q\u{02}"])
    }

    @Test func anErrorMessageQuotingTheClientsTextIsEscapedOntoOneValidLine() throws {
        // The unknown op carries a quote, a backslash and a newline (escaped in the request).
        let response = respond(to: #"{"op":"a\"b\\c\nd","id":{ "k" : "v" }}"#)
        #expect(response.filter { $0 == "\n" }.count == 1)
        let parsed = try parseJSONObject(response)
        #expect(parsed["ok"] as? Bool == false)
        #expect((parsed["id"] as? [String: String]) == ["k": "v"])
        let error = try #require(parsed["error"] as? [String: Any])
        #expect(error["code"] as? String == "unknown_op")
        #expect((error["message"] as? String)?.contains("a\"b\\c\nd") == true)
    }

    @Test func everyResponseKindIsOneValidJSONLine() throws {
        let lines = [
            encode(.pong, id: ByteBuffer(string: #"[1,{"a":null}]"#)),
            encode(.access(.active(until: Self.december21))),
            encode(.access(.inactive)),
            encode(.claimed(3)),
            encode(.membership(Self.revokedLifetimeMembership, moment: Self.created)),
            encode(.memberships([Self.guestMembership, Self.revokedLifetimeMembership], moment: Self.created, next: nil)),
            encode(.defined(entitlement: "pro", products: [])),
            encode(.catalog([(entitlement: "pro", products: ["p"])])),
            encode(WireError(.badRequest, #"field "product" is required for grant"#), id: ByteBuffer(string: "null")),
        ]
        for line in lines {
            #expect(line.hasSuffix("\n"))
            #expect(line.filter { $0 == "\n" }.count == 1)
            _ = try parseJSONObject(line)
        }
    }
}
