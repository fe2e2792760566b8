import Testing

@testable import EntitledCore
@testable import EntitledWire

/// The fields an importer of store subscribers sends (`grant`'s `purchasedAt` and `renewsCount`) and the
/// listing a daily reconciliation reads (`memberships` with `source`, `endedAfter` and a position as `after`).
@Suite struct ImportAndReconciliationRequestTests {
    static let march1 = Timestamp(millisecondsSinceEpoch: 1_709_287_200_000)  // 2024-03-01T10:00:00Z

    @Test func aGrantDecodesPurchasedAtAndRenewsCount() throws {
        let grant = try #require(
            try request(
                #"{"op":"grant","user":"alice","product":"prod_pro","source":"play_store","purchasedAt":"2024-03-01T11:00:00+01:00","duration":"1mo","renewsCount":23}"#
            ).grant)
        #expect(grant.purchasedAt == Self.march1)
        #expect(grant.terms.renewsCount == 23)
        #expect(grant.expiry == .after(.months(1)))
        let plain = try #require(try request(#"{"op":"grant","user":"alice","product":"prod_pro","purchasedAt":null,"renewsCount":null}"#).grant)
        #expect(plain.purchasedAt == nil)
        #expect(plain.terms == .standard)
        let none = try #require(try request(#"{"op":"grant","user":"alice","product":"prod_pro","renewsCount":0}"#).grant)
        #expect(none.terms.renewsCount == 0)
    }

    @Test func renewsCountIsAWholeNumberFromZeroTo100000() throws {
        let most = try #require(try request(#"{"op":"grant","user":"a","product":"p","renewsCount":100000}"#).grant)
        #expect(most.terms.renewsCount == Limits.maximumImportedRenewals)
        try expectBadRequest(#"{"op":"grant","user":"a","product":"p","renewsCount":100001}"#, mentioning: #"field "renewsCount" must be from 0 to 100000"#)
        for value in [#""23""#, "-1", "1.5", "1e2", "true", "1234567890"] {
            try expectBadRequest(#"{"op":"grant","user":"a","product":"p","renewsCount":\#(value)}"#, mentioning: #"field "renewsCount" must be a whole number"#)
        }
    }

    @Test func purchasedAtIsAProtocolTime() throws {
        for value in [#""2024-03-01""#, #""2024-02-30T00:00:00Z""#, #""yesterday""#, "1709287200000"] {
            try expectBadRequest(#"{"op":"grant","user":"a","product":"p","purchasedAt":\#(value)}"#, mentioning: #"field "purchasedAt" must be"#)
        }
        // Fields of a grant only.
        try expectBadRequest(#"{"op":"check","user":"a","purchasedAt":"2024-03-01T10:00:00Z"}"#, mentioning: #"field "purchasedAt" is not used by check"#)
        try expectBadRequest(#"{"op":"event","membership":"mem_0k3n5q8r2t4v6","renewsCount":1}"#, mentioning: #"field "renewsCount" is not used by event"#)
    }

    @Test func membershipsDecodesASourceEndedAfterAndAPosition() throws {
        let line = #"{"op":"memberships","source":"app_store","endedAfter":"2024-03-01T10:00:00Z","limit":500,"after":"1f.19999.mem_0k3n5q8r2t4v6"}"#
        guard case .memberships(let selection, nil, 500, nil) = try request(line) else {
            Issue.record("not a listing of a source")
            return
        }
        let position = SourceCursor(numbering: 0x1f, slot: 19_999, anchor: MembershipID(rawValue: "mem_0k3n5q8r2t4v6"))
        #expect(selection == .source(.appStore, endedAfter: Self.march1, after: position))
        guard case .memberships(let every, nil, Limits.defaultMembershipsPerPage, nil) = try request(#"{"op":"memberships","source":"whop","minSeq":3}"#)
        else {
            Issue.record("not a listing of a source")
            return
        }
        #expect(every == .source(.whop, endedAfter: nil, after: nil))
    }

    @Test func aSourceListingRefusesOtherSelectorsAMomentAndAnotherListingsCursor() throws {
        let several = #"memberships takes one of "user"/"device", "transactionId", "originalTransactionId" and "source", not several"#
        for line in [
            #"{"op":"memberships","source":"stripe","user":"alice"}"#, #"{"op":"memberships","source":"stripe","device":"phone"}"#,
            #"{"op":"memberships","source":"stripe","transactionId":"t1"}"#,
            #"{"op":"memberships","source":"stripe","originalTransactionId":"t1"}"#,
        ] {
            try expectBadRequest(line, mentioning: several)
        }
        try expectBadRequest(#"{"op":"memberships","user":"alice","endedAfter":"2024-03-01T10:00:00Z"}"#, mentioning: #"field "endedAfter" goes with "source""#)
        try expectBadRequest(
            #"{"op":"memberships","source":"stripe","at":"2024-03-01T10:00:00Z"}"#, mentioning: #"field "at" goes with "user" or "device", not with "source""#
        )
        try expectBadRequest(#"{"op":"memberships","source":"itunes"}"#, mentioning: #"field "source" must be one of app_store"#)
        try expectBadRequest(#"{"op":"memberships","source":"stripe","endedAfter":"soon"}"#, mentioning: #"field "endedAfter" must be an RFC 3339 time"#)
        // A membership id is not a position, and a position is not a membership id.
        try expectBadRequest(
            #"{"op":"memberships","source":"stripe","after":"mem_0k3n5q8r2t4v6"}"#,
            mentioning: #"field "after" is not a position in a listing of a source's memberships"#
        )
        try expectBadRequest(#"{"op":"memberships","user":"alice","after":"1f.19999.-"}"#, mentioning: #"field "after" must be a membership id"#)
        try expectBadRequest(#"{"op":"grant","user":"a","product":"p","endedAfter":"2024-03-01T10:00:00Z"}"#, mentioning: #"not used by grant"#)
    }

    @Test func aPagesNextIsWrittenAsItIsGiven() throws {
        let line = encode(.memberships([], moment: Self.march1, next: "1f.19999.-"))
        #expect(line == #"{"ok":true,"memberships":[],"next":"1f.19999.-"}"# + "\n")
    }
}
