import NIOCore
import Testing

@testable import EntitledCore
@testable import EntitledWire

/// Each operation decodes to the right typed request with its fields.
@Suite struct RequestDecodingTests {
    static let december21 = Timestamp(millisecondsSinceEpoch: 1_797_811_200_000)  // 2026-12-21T00:00:00Z

    @Test func pingDecodesToPing() throws {
        let decoded = try request(#"{"op":"ping"}"#)
        guard case .ping = decoded else {
            Issue.record("decoded \(decoded)")
            return
        }
        #expect(decoded.op == .ping)
    }

    @Test func grantDecodesEveryFieldWithAFixedExpiry() throws {
        let grant = try #require(
            try request(
                #"{"op":"grant","user":"alice","device":"phone","product":"prod_pro","plan":"plan_monthly","source":"app_store","expiresAt":"2026-12-21T01:30:00+01:30"}"#
            ).grant)
        #expect(grant.subject == .user("alice", device: "phone"))
        #expect(grant.productId == "prod_pro")
        #expect(grant.planId == "plan_monthly")
        #expect(grant.source == .appStore)
        #expect(grant.expiry == .at(Self.december21))
    }

    @Test func grantDecodesADuration() throws {
        let grant = try #require(try request(#"{"op":"grant","device":"phone","product":"prod_pro","duration":"30d"}"#).grant)
        #expect(grant.subject == .device("phone"))
        #expect(grant.expiry == .after(.days(30)))
    }

    @Test func aGrantWithoutExpiryPlanOrSourceIsALifetimeManualGrant() throws {
        let grant = try #require(try request(#"{"op":"grant","user":"alice","product":"prod_pro"}"#).grant)
        #expect(grant.subject == .user("alice"))
        #expect(grant.planId == nil)
        #expect(grant.source == .manual)
        #expect(grant.expiry == .lifetime)
    }

    @Test func grantAcceptsEverySourceTheProtocolNames() throws {
        for source in ["app_store", "play_store", "stripe", "whop", "manual", "promotional"] {
            let grant = try #require(
                try request(#"{"op":"grant","user":"u","product":"p","source":"\#(source)"}"#).grant)
            #expect(grant.source.rawValue == source)
        }
    }

    @Test func checkDecodesSubjectProductAndMoment() throws {
        let query = try #require(
            try request(#"{"op":"check","user":"alice","device":"phone","product":"prod_pro","at":"2026-12-21T00:00:00Z"}"#)
                .accessQuery)
        #expect(query.subject == .user("alice", device: "phone"))
        #expect(query.filter == .product("prod_pro"))
        #expect(query.moment == Self.december21)
    }

    @Test func checkDecodesAnEntitlementFilter() throws {
        let query = try #require(try request(#"{"op":"check","device":"phone","entitlement":"pro"}"#).accessQuery)
        #expect(query.subject == .device("phone"))
        #expect(query.filter == .entitlement("pro"))
        #expect(query.moment == nil)
    }

    @Test func aCheckWithoutProductOrEntitlementMeansAnyProduct() throws {
        let query = try #require(try request(#"{"op":"check","user":"alice"}"#).accessQuery)
        #expect(query.filter == .anyProduct)
        #expect(query.moment == nil)
    }

    @Test func claimDecodesDeviceAndUser() throws {
        guard case .claim(let device, let user, _) = try request(#"{"op":"claim","user":"alice","device":"phone"}"#) else {
            Issue.record("not a claim")
            return
        }
        #expect(device == "phone")
        #expect(user == "alice")
    }

    @Test func revokeDecodesTheMembershipIDAndReason() throws {
        guard case .revoke(let id, let reason) = try request(#"{"op":"revoke","membership":"mem_0k3n5q8r2t4v6","reason":"refund"}"#)
        else {
            Issue.record("not a revoke")
            return
        }
        #expect(id == MembershipID(rawValue: "mem_0k3n5q8r2t4v6"))
        #expect(reason == "refund")
    }

    @Test func aRevokeWithoutAReasonHasNoReason() throws {
        guard case .revoke(_, let reason) = try request(#"{"op":"revoke","membership":"mem_0k3n5q8r2t4v6"}"#) else {
            Issue.record("not a revoke")
            return
        }
        #expect(reason == nil)
    }

    @Test func membershipsDecodesTheSubjectAndMoment() throws {
        guard case .memberships(let subject, let moment, Limits.defaultMembershipsPerPage, nil) = try request(
            #"{"op":"memberships","user":"alice","device":"phone","at":"2026-12-21T00:00:00Z"}"#)
        else {
            Issue.record("not memberships")
            return
        }
        #expect(subject == .visible(to: .user("alice", device: "phone")))
        #expect(moment == Self.december21)

        guard case .memberships(let deviceOnly, nil, _, nil) = try request(#"{"op":"memberships","device":"phone"}"#) else {
            Issue.record("not memberships without a moment")
            return
        }
        #expect(deviceOnly == .visible(to: .device("phone")))
    }

    @Test func membershipsDecodesATransactionOrAnOriginalTransaction() throws {
        guard case .memberships(let byTransaction, nil, _, nil) = try request(#"{"op":"memberships","transactionId":"2000000456"}"#) else {
            Issue.record("not memberships by transaction")
            return
        }
        #expect(byTransaction == .transaction("2000000456"))
        guard case .memberships(let byOriginal, nil, _, nil) = try request(#"{"op":"memberships","originalTransactionId":"2000000123","minSeq":5}"#)
        else {
            Issue.record("not memberships by original transaction")
            return
        }
        #expect(byOriginal == .originalTransaction("2000000123"))
    }

    @Test func membershipsRefusesSeveralSelectorsAndAMomentWithATransaction() throws {
        let several = #"memberships takes one of "user"/"device", "transactionId", "originalTransactionId" and "source", not several"#
        for line in [
            #"{"op":"memberships","user":"alice","transactionId":"t1"}"#,
            #"{"op":"memberships","device":"phone","originalTransactionId":"t1"}"#,
            #"{"op":"memberships","transactionId":"t1","originalTransactionId":"t1"}"#,
        ] {
            try expectBadRequest(line, mentioning: several)
        }
        try expectBadRequest(
            #"{"op":"memberships","originalTransactionId":"t1","at":"2026-12-21T00:00:00Z"}"#,
            mentioning: #"field "at" goes with "user" or "device", not with "originalTransactionId""#
        )
        // A null selector is an absent one.
        try expectBadRequest(
            #"{"op":"memberships","transactionId":null}"#,
            mentioning: #"memberships needs "user" or "device" (or both), "transactionId", "originalTransactionId" or "source""#
        )
    }

    @Test func defineDecodesTheEntitlementAndItsProducts() throws {
        guard case .define(let entitlement, let products, _) = try request(
            #"{"op":"define","entitlement":"pro","products":["prod_b","prod_a"]}"#)
        else {
            Issue.record("not a define")
            return
        }
        #expect(entitlement == "pro")
        #expect(products == ["prod_b", "prod_a"])
    }

    @Test func defineRefusesAnEmptyProductListNamingUndefine() throws {
        // Protocol version 1 took it as "nothing unlocks pro": a forgotten list silently emptied the entitlement.
        try expectBadRequest(#"{"op":"define","entitlement":"pro","products":[ ]}"#, mentioning: #""products""#, "undefine")
    }

    @Test func undefineAndEraseDecode() throws {
        guard case .undefine(let entitlement, let reason) = try request(#"{"op":"undefine","entitlement":"pro","reason":"retired"}"#) else {
            Issue.record("not an undefine")
            return
        }
        #expect(entitlement == "pro")
        #expect(reason == "retired")
        try expectBadRequest(#"{"op":"undefine"}"#, mentioning: #"field "entitlement" is required for undefine"#)
        try expectBadRequest(#"{"op":"undefine","entitlement":"pro","products":["p"]}"#, mentioning: #"field "products" is not used by undefine"#)

        guard case .erase(let subject, nil) = try request(#"{"op":"erase","user":"bob","device":"d1"}"#) else {
            Issue.record("not an erase")
            return
        }
        #expect(subject == .user("bob", device: "d1"))
        guard case .erase(.device("d1"), "ticket 9") = try request(#"{"op":"erase","device":"d1","reason":"ticket 9"}"#) else {
            Issue.record("not an erase of a device")
            return
        }
        try expectBadRequest(#"{"op":"erase"}"#, mentioning: "erase needs", #""user""#, #""device""#)
        try expectBadRequest(#"{"op":"erase","usr":"bob"}"#, mentioning: #"did you mean "user""#)
        guard case .history(.erasures, 5, nil) = try request(#"{"op":"history","erasures":true,"limit":5}"#) else {
            Issue.record("not the erasures' history")
            return
        }
        try expectBadRequest(#"{"op":"history","erasures":true,"user":"bob"}"#, mentioning: #""erasures": true alone"#)
    }

    @Test func undefineAndEraseAreAdminOperations() throws {
        let checkRole = OperationPermissions(
            allowing: [.ping, .hello, .auth, .check, .memberships, .customer, .catalog, .watch, .unwatch], refusalCode: .forbidden
        )
        for line in [#"{"op":"undefine","entitlement":"pro"}"#, #"{"op":"erase","user":"bob"}"#] {
            let decoded = RequestDecoder.decode(line: ByteBuffer(string: line), permitting: checkRole)
            #expect(try failure(of: decoded).code == .forbidden)
        }
    }

    @Test func catalogDecodesToCatalog() throws {
        let decoded = try request(#"{"op":"catalog"}"#)
        guard case .catalog = decoded else {
            Issue.record("decoded \(decoded)")
            return
        }
    }

    @Test func whitespaceAroundTokensIsAllowed() throws {
        let query = try #require(try request(" \t{ \"op\" : \"check\" ,\n \"user\" : \"alice\" } ").accessQuery)
        #expect(query.subject == .user("alice"))
    }

    @Test func aTrailingCarriageReturnIsTolerated() throws {
        let decoded = decode("{\"op\":\"check\",\"user\":\"alice\",\"id\":7}\r")
        guard case .success(.check(let query)) = decoded.result else {
            Issue.record("decoded \(decoded.result)")
            return
        }
        #expect(query.subject == .user("alice"))
        #expect(decoded.id.map { String(buffer: $0) } == "7")
    }

    @Test func theOperationNamesAreTheProtocols() {
        #expect(Request.Operation.allCases.map(\.rawValue)
            == [
            "ping", "grant", "check", "claim", "revoke", "memberships", "define", "catalog", "snapshot", "event", "customer",
            "history", "watch", "unwatch", "hello", "auth", "stats", "reload", "undefine", "erase", "extend", "changes", "export",
        ])
    }
}
