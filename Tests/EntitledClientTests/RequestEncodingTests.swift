import Testing

@testable import EntitledClient

/// The protocol as the client writes and reads it: request lines, response lines, and the messages of the
/// client's errors.
@Suite struct RequestEncodingTests {
    // MARK: - Requests

    @Suite struct Requests {
        @Test func operationsWithoutFieldsAreTheOpAlone() {
            #expect(EntitledRequest.ping.jsonLine == #"{"op":"ping"}"#)
            #expect(EntitledRequest.catalog.jsonLine == #"{"op":"catalog"}"#)
            #expect(EntitledRequest.snapshot.jsonLine == #"{"op":"snapshot"}"#)
        }

        @Test func checkLeavesOutTheFieldsNotGiven() {
            #expect(EntitledRequest.check(user: "u1").jsonLine == #"{"op":"check","user":"u1"}"#)
            #expect(EntitledRequest.check(device: "d1", product: "p").jsonLine == #"{"op":"check","device":"d1","product":"p"}"#)
        }

        @Test func checkWritesUserDeviceProductEntitlementAt() {
            #expect(
                EntitledRequest.check(user: "u", device: "d", product: "p", entitlement: "e", at: "2027-01-01T00:00:00Z").jsonLine
                    == #"{"op":"check","user":"u","device":"d","product":"p","entitlement":"e","at":"2027-01-01T00:00:00Z"}"#
            )
        }

        @Test func grantNeedsOnlyAProduct() {
            #expect(EntitledRequest.grant(product: "p").jsonLine == #"{"op":"grant","product":"p"}"#)
        }

        @Test func grantWritesUserDeviceProductPlanSourceExpiresAtDuration() {
            #expect(
                EntitledRequest.grant(
                    user: "u", device: "d", product: "p", plan: "pl", source: "stripe", expiresAt: "2027-01-01T00:00:00Z",
                    duration: "30d"
                ).jsonLine
                    == #"{"op":"grant","user":"u","device":"d","product":"p","plan":"pl","source":"stripe","expiresAt":"2027-01-01T00:00:00Z","duration":"30d"}"#
            )
            #expect(
                EntitledRequest.grant(device: "d1", product: "prod_pro", source: "app_store", duration: "30d").jsonLine
                    == #"{"op":"grant","device":"d1","product":"prod_pro","source":"app_store","duration":"30d"}"#
            )
        }

        @Test func grantWritesTheLifecycleFieldsAfterTheExpiryWillRenewAsABoolean() {
            #expect(
                EntitledRequest.grant(
                    user: "u", product: "p", source: "app_store", duration: "7d", willRenew: true, periodType: "trial",
                    environment: "sandbox", ownership: "family_shared", grantType: "family_sharing", transactionId: "tx_2",
                    originalTransactionId: "tx_1", idempotencyKey: "order-7", reason: "first purchase"
                ).jsonLine
                    == #"{"op":"grant","user":"u","product":"p","source":"app_store","duration":"7d","willRenew":true,"periodType":"trial","environment":"sandbox","ownership":"family_shared","grantType":"family_sharing","transactionId":"tx_2","originalTransactionId":"tx_1","idempotencyKey":"order-7","reason":"first purchase"}"#
            )
            #expect(EntitledRequest.grant(product: "p", willRenew: false).jsonLine == #"{"op":"grant","product":"p","willRenew":false}"#)
        }

        @Test func claimWritesDeviceThenUser() {
            #expect(EntitledRequest.claim(device: "d1", user: "u1").jsonLine == #"{"op":"claim","device":"d1","user":"u1"}"#)
            #expect(
                EntitledRequest.claim(device: "d1", user: "u1", reason: "login").jsonLine
                    == #"{"op":"claim","device":"d1","user":"u1","reason":"login"}"#
            )
        }

        @Test func revokeWritesTheReasonOnlyWhenGiven() {
            #expect(EntitledRequest.revoke(membership: "mem_x").jsonLine == #"{"op":"revoke","membership":"mem_x"}"#)
            #expect(
                EntitledRequest.revoke(membership: "mem_x", reason: "refund").jsonLine
                    == #"{"op":"revoke","membership":"mem_x","reason":"refund"}"#
            )
        }

        @Test func extendWritesTheMembershipThenTheDurationOrTheMomentAndTheReason() {
            #expect(EntitledRequest.extend(membership: "mem_x", duration: "1mo").jsonLine == #"{"op":"extend","membership":"mem_x","duration":"1mo"}"#)
            #expect(
                EntitledRequest.extend(membership: "mem_x", expiresAt: "2027-01-01T00:00:00Z", reason: "outage").jsonLine
                    == #"{"op":"extend","membership":"mem_x","expiresAt":"2027-01-01T00:00:00Z","reason":"outage"}"#
            )
            #expect(!EntitledRequest.extend(membership: "mem_x", duration: "1d").isRead)
        }

        @Test func membershipsWritesUserDeviceAt() {
            #expect(EntitledRequest.memberships(device: "d1").jsonLine == #"{"op":"memberships","device":"d1"}"#)
            #expect(
                EntitledRequest.memberships(user: "u1", device: "d1", at: "2027-01-01T00:00:00Z").jsonLine
                    == #"{"op":"memberships","user":"u1","device":"d1","at":"2027-01-01T00:00:00Z"}"#
            )
        }

        @Test func membershipsWritesTheLimitAsANumberAndTheCursorLastOnlyWhenGiven() {
            #expect(
                EntitledRequest.memberships(user: "u1", minSeq: 7, limit: 1000, after: "mem_1ymr6jcw5jqzv").jsonLine
                    == #"{"op":"memberships","user":"u1","minSeq":7,"limit":1000,"after":"mem_1ymr6jcw5jqzv"}"#
            )
            #expect(EntitledRequest.memberships(device: "d1", after: "mem_x").jsonLine == #"{"op":"memberships","device":"d1","after":"mem_x"}"#)
            #expect(
                EntitledRequest.memberships(transactionId: "t1", limit: 5).jsonLine == #"{"op":"memberships","transactionId":"t1","limit":5}"#
            )
            #expect(
                EntitledRequest.memberships(originalTransactionId: "o1", limit: 2, after: "mem_x").jsonLine
                    == #"{"op":"memberships","originalTransactionId":"o1","limit":2,"after":"mem_x"}"#
            )
            #expect(EntitledRequest.memberships(transactionId: "t1").jsonLine == #"{"op":"memberships","transactionId":"t1"}"#)
        }

        @Test func anImportedGrantWritesPurchasedAtAndRenewsCountAfterTheExpiry() {
            #expect(
                EntitledRequest.grant(
                    user: "u1", product: "p", source: "play_store", duration: "1mo", purchasedAt: "2024-03-01T10:00:00Z", renewsCount: 23,
                    transactionId: "GPA.1..23"
                ).jsonLine
                    == #"{"op":"grant","user":"u1","product":"p","source":"play_store","duration":"1mo","purchasedAt":"2024-03-01T10:00:00Z","renewsCount":23,"transactionId":"GPA.1..23"}"#
            )
        }

        @Test func aSourcesListingWritesTheSourceTheMomentAndThePosition() {
            #expect(EntitledRequest.memberships(source: "app_store").jsonLine == #"{"op":"memberships","source":"app_store"}"#)
            let first = EntitledRequest.memberships(source: "stripe", endedAfter: "2027-01-01T00:00:00Z", minSeq: 3, limit: 1000)
            #expect(
                first.jsonLine == #"{"op":"memberships","source":"stripe","endedAfter":"2027-01-01T00:00:00Z","minSeq":3,"limit":1000}"#
            )
            #expect(first.page(after: "1f.19999.-") == .memberships(source: "stripe", endedAfter: "2027-01-01T00:00:00Z", minSeq: 3, limit: 1000, after: "1f.19999.-"))
            #expect(first.isRead)
        }

        @Test func theNextPageIsTheSameRequestWithItsAfterSet() {
            let first = EntitledRequest.memberships(user: "u1", limit: 10)
            #expect(first.page(after: "mem_a").jsonLine == #"{"op":"memberships","user":"u1","limit":10,"after":"mem_a"}"#)
            // A later page's cursor replaces the one before, where it was.
            #expect(first.page(after: "mem_a").page(after: "mem_b") == .memberships(user: "u1", limit: 10, after: "mem_b"))
            #expect(EntitledRequest.history(user: "u1", after: "1.2.-.3").page(after: "1.1.-.2") == .history(user: "u1", after: "1.1.-.2"))
            #expect(EntitledRequest.maximumPageLimit == 1000)
        }

        @Test func defineWritesTheProductsAsAnArrayAsGiven() {
            #expect(
                EntitledRequest.define(entitlement: "pro", products: ["prod_y", "prod_m", "prod_m"]).jsonLine
                    == #"{"op":"define","entitlement":"pro","products":["prod_y","prod_m","prod_m"]}"#
            )
            #expect(EntitledRequest.define(entitlement: "beta", products: []).jsonLine == #"{"op":"define","entitlement":"beta","products":[]}"#)
        }

        @Test func defineWritesTheReasonAfterTheProducts() {
            #expect(
                EntitledRequest.define(entitlement: "pro", products: ["p"], reason: "launch").jsonLine
                    == #"{"op":"define","entitlement":"pro","products":["p"],"reason":"launch"}"#
            )
        }

        @Test func eventWritesMembershipTypeIdTimeThenTheFieldsGiven() {
            #expect(
                EntitledRequest.event(membership: "mem_x", type: "refund", eventId: "e1", eventTime: "2026-12-01T00:00:00Z").jsonLine
                    == #"{"op":"event","membership":"mem_x","type":"refund","eventId":"e1","eventTime":"2026-12-01T00:00:00Z"}"#
            )
            #expect(
                EntitledRequest.event(
                    membership: "mem_x", type: "renewal", eventId: "e2", eventTime: "2026-12-22T00:00:00Z",
                    expiresAt: "2027-01-22T00:00:00Z", gracePeriodExpiresAt: "2027-02-01T00:00:00Z", product: "p2",
                    transactionId: "tx_3", reason: "r"
                ).jsonLine
                    == #"{"op":"event","membership":"mem_x","type":"renewal","eventId":"e2","eventTime":"2026-12-22T00:00:00Z","expiresAt":"2027-01-22T00:00:00Z","gracePeriodExpiresAt":"2027-02-01T00:00:00Z","product":"p2","transactionId":"tx_3","reason":"r"}"#
            )
        }

        @Test func customerWritesTheSubject() {
            #expect(EntitledRequest.customer(user: "u1", device: "d1").jsonLine == #"{"op":"customer","user":"u1","device":"d1"}"#)
        }

        @Test func undefineEraseAndTheErasuresHistoryWriteTheirFields() {
            #expect(EntitledRequest.undefine(entitlement: "pro").jsonLine == #"{"op":"undefine","entitlement":"pro"}"#)
            #expect(
                EntitledRequest.undefine(entitlement: "pro", reason: "retired").jsonLine
                    == #"{"op":"undefine","entitlement":"pro","reason":"retired"}"#
            )
            #expect(EntitledRequest.erase(user: "u1").jsonLine == #"{"op":"erase","user":"u1"}"#)
            #expect(
                EntitledRequest.erase(user: "u1", device: "d1", reason: "ticket 9").jsonLine
                    == #"{"op":"erase","user":"u1","device":"d1","reason":"ticket 9"}"#
            )
            #expect(EntitledRequest.erasureHistory().jsonLine == #"{"op":"history","erasures":true}"#)
            #expect(EntitledRequest.erasureHistory(limit: 5).jsonLine == #"{"op":"history","erasures":true,"limit":5}"#)
        }

        @Test func anEraseAnswerAndAnErasureEntryReadTheirCounts() throws {
            let answer = try EntitledResponse(line: #"{"ok":true,"erased":{"memberships":2,"historyEntries":5}}"#)
            #expect(answer.erased == ErasureCounts(memberships: 2, historyEntries: 5))
            let trail = try EntitledResponse(
                line: #"{"ok":true,"history":[{"time":"2026-11-25T11:33:34.697Z","actor":"dpo","action":"erase","reason":"ticket 9","sequence":6,"erased":{"memberships":2,"historyEntries":3}}]}"#
            )
            let entry = try #require(trail.history?.first)
            #expect(entry.action == "erase")
            #expect(entry.erased == ErasureCounts(memberships: 2, historyEntries: 3))
            #expect(entry.membership == nil)
        }

        @Test func historyWritesTheTargetAndTheLimitAsANumber() {
            #expect(EntitledRequest.history(user: "u1").jsonLine == #"{"op":"history","user":"u1"}"#)
            #expect(
                EntitledRequest.history(device: "d1", limit: 20).jsonLine == #"{"op":"history","device":"d1","limit":20}"#
            )
            #expect(EntitledRequest.history(entitlement: "pro").jsonLine == #"{"op":"history","entitlement":"pro"}"#)
        }

        @Test func historyWritesTheCursorAfterTheLimitUnchanged() {
            #expect(
                EntitledRequest.history(user: "u1", limit: 2, after: "1764000000000.3.mem_92dpedc461kg5.0").jsonLine
                    == #"{"op":"history","user":"u1","limit":2,"after":"1764000000000.3.mem_92dpedc461kg5.0"}"#
            )
            #expect(EntitledRequest.history(entitlement: "pro", after: "1.1.-.4").jsonLine == #"{"op":"history","entitlement":"pro","after":"1.1.-.4"}"#)
            #expect(EntitledRequest.erasureHistory(after: "1.1.-.4").jsonLine == #"{"op":"history","erasures":true,"after":"1.1.-.4"}"#)
            #expect(
                EntitledRequest.erasureHistory(limit: 5, after: "1.1.-.4").jsonLine == #"{"op":"history","erasures":true,"limit":5,"after":"1.1.-.4"}"#
            )
        }

        @Test func watchAndUnwatchWriteTheSubjectOrAll() {
            #expect(EntitledRequest.watch(user: "u1").jsonLine == #"{"op":"watch","user":"u1"}"#)
            #expect(EntitledRequest.watchAll.jsonLine == #"{"op":"watch","all":true}"#)
            #expect(EntitledRequest.unwatch(device: "d1").jsonLine == #"{"op":"unwatch","device":"d1"}"#)
            #expect(EntitledRequest.unwatch().jsonLine == #"{"op":"unwatch"}"#)
            #expect(EntitledRequest.unwatchAll.jsonLine == #"{"op":"unwatch","all":true}"#)
        }

        @Test func theKnownNamesAreTheServersLists() {
            #expect(EntitledRequest.Names.eventTypes.count == 12)
            #expect(EntitledRequest.Names.periodTypes.first == "normal")
            #expect(EntitledRequest.Names.grantTypes == ["purchase", "family_sharing", "offer_code", "manual"])
        }

        @Test func authCarriesTheToken() {
            #expect(EntitledRequest.auth(token: "s3cret").jsonLine == #"{"op":"auth","token":"s3cret"}"#)
        }

        @Test func fieldsThisLibraryDoesNotKnowAreWrittenInTheirOrder() {
            let request = EntitledRequest(op: "check", fields: [(key: "id", value: 7), (key: "user", value: "u1"), (key: "x", value: [true, nil])])
            #expect(request.jsonLine == #"{"op":"check","id":7,"user":"u1","x":[true,null]}"#)
        }

        @Test func valuesAreEscapedSoTheRequestStaysOneLine() {
            #expect(
                EntitledRequest.revoke(membership: "mem_x", reason: "line 1\nline \"2\" \\ end").jsonLine
                    == #"{"op":"revoke","membership":"mem_x","reason":"line 1\nline \"2\" \\ end"}"#
            )
        }

        @Test func requestsAreEqualWhenTheirLinesAre() {
            #expect(EntitledRequest.check(user: "u1") == EntitledRequest(op: "check", fields: [(key: "user", value: "u1")]))
            #expect(EntitledRequest.check(user: "u1") != EntitledRequest.check(device: "u1"))
            #expect(
                EntitledRequest.claim(device: "d", user: "u") != EntitledRequest(op: "claim", fields: [(key: "user", value: "u"), (key: "device", value: "d")])
            )
            #expect(Set([EntitledRequest.ping, .ping, .catalog]).count == 2)
        }
    }

    // MARK: - Responses

    @Suite struct Responses {
        static let guestGrant =
            #"{"ok":true,"id":5,"membership":{"id":"mem_1ymr6jcw5jqzv","productId":"prod_pro_monthly","planId":"plan_monthly","device":"dev_A","status":"active","isActive":true,"createdAt":"2026-11-22T00:31:45.833Z","expiresAt":"2026-12-22T00:31:45.833Z","source":"app_store"}}"#
        static let revoked =
            #"{"ok":true,"id":19,"membership":{"id":"mem_dnc456md2j73z","productId":"prod_pro_yearly","user":"user_42","status":"revoked","isActive":false,"createdAt":"2026-11-22T00:31:45.834Z","expiresAt":null,"source":"promotional","revokedAt":"2026-11-22T00:31:50.960Z","reason":"refund"}}"#
        static let memberships =
            #"{"ok":true,"id":24,"memberships":[{"id":"mem_dnc456md2j73z","productId":"prod_pro_yearly","user":"user_42","status":"revoked","isActive":false,"createdAt":"2026-11-22T00:31:45.834Z","expiresAt":null,"source":"promotional","revokedAt":"2026-11-22T00:31:50.960Z","reason":"refund"},{"id":"mem_bydn4qrrzzhrt","productId":"prod_pro_yearly","planId":"plan_yearly","user":"user_42","device":"dev_B","status":"active","isActive":true,"createdAt":"2026-11-22T00:31:45.834Z","expiresAt":"2027-12-20T23:00:00Z","source":"stripe"},{"id":"mem_1ymr6jcw5jqzv","productId":"prod_pro_monthly","planId":"plan_monthly","user":"user_42","device":"dev_A","status":"active","isActive":true,"createdAt":"2026-11-22T00:31:45.833Z","expiresAt":"2026-12-22T00:31:45.833Z","source":"app_store"}]}"#
        static let catalog = #"{"ok":true,"id":4,"entitlements":{"beta":[],"pro":["prod_pro_monthly","prod_pro_yearly"]}}"#
        static let notFound = #"{"ok":false,"id":21,"error":{"code":"not_found","message":"no membership has the id \"mem_0000000000000\""}}"#

        static func malformed(_ line: String) -> EntitledClientError? {
            do {
                _ = try EntitledResponse(line: line)
                return nil
            } catch {
                return error
            }
        }

        @Test func aPageWithMoreToComeHasItsNextAndTheLastPageNone() throws {
            let page = try EntitledResponse(line: String(Self.memberships.dropLast()) + #","next":"mem_1ymr6jcw5jqzv"}"#)
            #expect(page.next == "mem_1ymr6jcw5jqzv")
            #expect(page.memberships?.count == 3)
            #expect(try EntitledResponse(line: Self.memberships).next == nil)
            #expect(try EntitledResponse(line: #"{"ok":true,"history":[],"next":"1.2.mem_x.0"}"#).next == "1.2.mem_x.0")
            #expect(try EntitledResponse(line: #"{"ok":true,"history":[],"next":null}"#).next == nil)
        }

        @Test func anOverLimitRefusalIsAnErrorAnswerWithItsCode() throws {
            let refused = try EntitledResponse(
                line: #"{"ok":false,"error":{"code":"over_limit","message":"user \"whale\" has 10001 memberships, more than the 10000 that customer goes through one by one"}}"#
            )
            #expect(!refused.isOK)
            #expect(refused.error?.code == .overLimit)
            #expect(refused.error?.message.hasPrefix(#"user "whale" has 10001 memberships"#) == true)
        }

        @Test func anOKResponseKeepsItsLineAsReceived() throws {
            let line = #"{ "ok" : true, "id" : 1 }"#
            let response = try EntitledResponse(line: line)
            #expect(response.isOK)
            #expect(response.error == nil)
            #expect(response.line == line)
            #expect(response["id"]?.intValue == 1)
            #expect(response.body.objectMembers?.map(\.key) == ["ok", "id"])
        }

        @Test func anErrorResponseGivesItsCodeAndMessage() throws {
            let response = try EntitledResponse(line: Self.notFound)
            #expect(!response.isOK)
            #expect(response.error == ServerFailure(code: .notFound, message: #"no membership has the id "mem_0000000000000""#))
            #expect(response.error?.description == #"not_found: no membership has the id "mem_0000000000000""#)
        }

        @Test func anErrorResponseWithoutDetailsStillHasACodeAndMessage() throws {
            #expect(try EntitledResponse(line: #"{"ok":false}"#).error == ServerFailure(code: .unknown("unknown"), message: "the server gave no message"))
            #expect(
                try EntitledResponse(line: #"{"ok":false,"error":{"code":"busy"}}"#).error
                    == ServerFailure(code: .busy, message: "the server gave no message")
            )
        }

        @Test func aGrantsMembershipIsReadWithEveryField() throws {
            let membership = try #require(try EntitledResponse(line: Self.guestGrant).membership)
            #expect(membership.id == "mem_1ymr6jcw5jqzv")
            #expect(membership.productId == "prod_pro_monthly")
            #expect(membership.planId == "plan_monthly")
            #expect(membership.user == nil)
            #expect(membership.device == "dev_A")
            #expect(membership.status == "active")
            #expect(membership.isActive)
            #expect(membership.createdAt == "2026-11-22T00:31:45.833Z")
            #expect(membership.expiresAt == "2026-12-22T00:31:45.833Z")
            #expect(membership.source == "app_store")
            #expect(membership.revokedAt == nil)
            #expect(membership.reason == nil)
        }

        static let trialGrant =
            #"{"ok":true,"membership":{"id":"mem_92dpedc461kg5","productId":"prod_plus_m","user":"user_7","device":"dev_7","status":"trialing","isActive":true,"createdAt":"2026-11-22T07:02:38.862Z","expiresAt":"2026-12-22T07:02:38.862Z","source":"app_store","willRenew":true,"periodType":"trial","renewState":"will_renew","renewsCount":0,"environment":"sandbox","ownership":"purchased","grantType":"purchase","transactions":[{"id":"tx_2","originalTransactionId":"tx_1","type":"trial_started","time":"2026-11-22T07:02:38.862Z","expiresAt":"2026-12-22T07:02:38.862Z","revokedAt":null}]},"idempotentReplay":true}"#
        static let billingIssue =
            #"{"ok":true,"membership":{"id":"mem_92dpedc461kg5","productId":"prod_plus_m","user":"user_7","device":"dev_7","status":"past_due","isActive":true,"createdAt":"2026-11-22T07:02:38.862Z","expiresAt":"2027-01-22T00:00:00Z","source":"app_store","willRenew":false,"periodType":"normal","renewState":"billing_issue","renewsCount":1,"environment":"sandbox","ownership":"family_shared","grantType":"offer_code","unsubscribeDetectedAt":"2026-12-24T00:00:00Z","billingIssueDetectedAt":"2026-12-23T00:00:00Z","gracePeriodExpiresAt":"2027-02-06T00:00:00Z","pausedAt":"2026-12-25T00:00:00Z"},"applied":false,"reason":"out_of_order"}"#
        static let customer =
            #"{"ok":true,"customer":{"entitlements":{"plus":{"isActive":true,"productId":"prod_plus_m","membership":"mem_92dpedc461kg5","expiresAt":"2027-02-06T00:00:00Z","willRenew":true,"periodType":"normal","store":"app_store","latestPurchaseDate":"2026-12-22T00:00:00Z","originalPurchaseDate":"2026-11-22T07:02:38.862Z","billingIssueDetectedAt":"2026-12-23T00:00:00Z","unsubscribeDetectedAt":null}},"activeProducts":["prod_plus_m"],"allPurchasedProductIds":["prod_plus_m"],"latestExpirationDate":"2027-01-22T00:00:00Z","firstSeen":"2026-11-22T07:02:38.862Z","requestDate":"2026-11-22T07:02:38.866Z"}}"#
        static let history =
            #"{"ok":true,"history":[{"time":"2026-11-22T07:02:38.864Z","actor":"local","action":"billing_issue","reason":"card declined","sequence":4,"eventId":"evt_2","eventTime":"2026-12-23T00:00:00Z","membership":{"id":"mem_92dpedc461kg5","productId":"prod_plus_m","status":"past_due","isActive":true,"createdAt":"2026-11-22T07:02:38.862Z","expiresAt":"2027-01-22T00:00:00Z","source":"app_store","willRenew":true,"periodType":"normal","renewState":"billing_issue","renewsCount":1,"environment":"sandbox","ownership":"purchased","grantType":"purchase"}},{"time":"2026-11-22T07:02:38.861Z","actor":"local","action":"define","sequence":1,"entitlement":"plus","products":["prod_plus_m","prod_plus_y"]},{"time":"2026-11-22T07:02:38.860Z","actor":"local","action":"grant","membership":{"id":"m"}}]}"#
        static let push =
            #"{"push":"access","cause":"cancellation","membership":{"id":"mem_2p12nek6vz5pf","productId":"prod_plus_m","user":"user_9","status":"canceled","isActive":true,"createdAt":"2026-11-22T07:02:59.507Z","expiresAt":"2026-12-22T07:02:59.507Z","source":"stripe","willRenew":false,"periodType":"normal","renewState":"canceled","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase","unsubscribeDetectedAt":"2026-11-23T00:00:00Z"}}"#

        @Test func aStoreGrantsLifecycleFieldsAndTransactionsAreRead() throws {
            let response = try EntitledResponse(line: Self.trialGrant)
            #expect(response.isIdempotentReplay)
            let membership = try #require(response.membership)
            #expect(membership.status == "trialing")
            #expect(membership.willRenew)
            #expect(membership.periodType == "trial")
            #expect(membership.renewState == "will_renew")
            #expect(membership.renewsCount == 0)
            #expect(membership.environment == "sandbox")
            #expect(membership.ownership == "purchased")
            #expect(membership.grantType == "purchase")
            #expect(membership.unsubscribeDetectedAt == nil)
            #expect(membership.pausedAt == nil)
            let transaction = try #require(membership.transactions.first)
            #expect(membership.transactions.count == 1)
            #expect(transaction.id == "tx_2")
            #expect(transaction.originalTransactionId == "tx_1")
            #expect(transaction.type == "trial_started")
            #expect(transaction.time == "2026-11-22T07:02:38.862Z")
            #expect(transaction.expiresAt == "2026-12-22T07:02:38.862Z")
            #expect(transaction.revokedAt == nil)
        }

        @Test func theDetectionTimesAndAnIgnoredEventAreRead() throws {
            let response = try EntitledResponse(line: Self.billingIssue)
            #expect(!response.isIdempotentReplay)
            #expect(response.eventOutcome == .ignored(reason: "out_of_order"))
            let membership = try #require(response.membership)
            #expect(membership.status == "past_due")
            #expect(membership.renewsCount == 1)
            #expect(membership.ownership == "family_shared")
            #expect(membership.grantType == "offer_code")
            #expect(membership.unsubscribeDetectedAt == "2026-12-24T00:00:00Z")
            #expect(membership.billingIssueDetectedAt == "2026-12-23T00:00:00Z")
            #expect(membership.gracePeriodExpiresAt == "2027-02-06T00:00:00Z")
            #expect(membership.pausedAt == "2026-12-25T00:00:00Z")
            #expect(membership.transactions.isEmpty)
            #expect(try EntitledResponse(line: #"{"ok":true,"applied":true}"#).eventOutcome == .applied)
            #expect(try EntitledResponse(line: #"{"ok":true,"applied":false}"#).eventOutcome == .ignored(reason: "unknown"))
            #expect(try EntitledResponse(line: Self.guestGrant).eventOutcome == nil)
        }

        @Test func aMembershipFromAServerWithoutTheLifecycleReadsAsAPlainGrant() throws {
            let membership = try #require(try EntitledResponse(line: Self.guestGrant).membership)
            #expect(!membership.willRenew)
            #expect(membership.periodType == "normal")
            #expect(membership.renewState == "non_renewable")
            #expect(membership.renewsCount == 0)
            #expect(membership.environment == "production")
            #expect(membership.ownership == "purchased")
            #expect(membership.grantType == "purchase")
            #expect(membership.transactions.isEmpty)
        }

        @Test func aCustomerIsReadWithItsEntitlementsInTheServersOrder() throws {
            let customer = try #require(try EntitledResponse(line: Self.customer).customer)
            #expect(customer.entitlements.map(\.name) == ["plus"])
            let plus = try #require(customer[entitlement: "plus"])
            #expect(plus.isActive)
            #expect(plus.productId == "prod_plus_m")
            #expect(plus.membership == "mem_92dpedc461kg5")
            #expect(plus.expiresAt == "2027-02-06T00:00:00Z")
            #expect(plus.willRenew)
            #expect(plus.periodType == "normal")
            #expect(plus.store == "app_store")
            #expect(plus.latestPurchaseDate == "2026-12-22T00:00:00Z")
            #expect(plus.originalPurchaseDate == "2026-11-22T07:02:38.862Z")
            #expect(plus.billingIssueDetectedAt == "2026-12-23T00:00:00Z")
            #expect(plus.unsubscribeDetectedAt == nil)
            #expect(customer[entitlement: "pro"] == nil)
            #expect(customer.activeProducts == ["prod_plus_m"])
            #expect(customer.allPurchasedProductIds == ["prod_plus_m"])
            #expect(customer.latestExpirationDate == "2027-01-22T00:00:00Z")
            #expect(customer.firstSeen == "2026-11-22T07:02:38.862Z")
            #expect(customer.requestDate == "2026-11-22T07:02:38.866Z")
            let copy = customer
            #expect(copy == customer)
            let empty = try #require(
                try EntitledResponse(
                    line: #"{"ok":true,"customer":{"entitlements":{},"activeProducts":[],"allPurchasedProductIds":[],"latestExpirationDate":null,"firstSeen":null,"requestDate":"2026-11-22T07:02:38.872Z"}}"#
                ).customer
            )
            #expect(empty.entitlements.isEmpty)
            #expect(empty.firstSeen == nil)
            #expect(empty != customer)
        }

        @Test func aHistoryIsReadNewestFirstSkippingNothingReadable() throws {
            let history = try #require(try EntitledResponse(line: Self.history).history)
            #expect(history.map(\.action) == ["billing_issue", "define", "grant"])
            #expect(history[0].time == "2026-11-22T07:02:38.864Z")
            #expect(history[0].actor == "local")
            #expect(history[0].reason == "card declined")
            #expect(history[0].sequence == 4)
            #expect(history[0].eventId == "evt_2")
            #expect(history[0].eventTime == "2026-12-23T00:00:00Z")
            #expect(history[0].membership?.status == "past_due")
            #expect(history[0].entitlement == nil)
            #expect(history[1].membership == nil)
            #expect(history[1].entitlement == "plus")
            #expect(history[1].products == ["prod_plus_m", "prod_plus_y"])
            #expect(history[1].reason == nil)
            // A membership the client cannot read leaves the entry without one.
            #expect(history[2].membership == nil)
            #expect(history[2].sequence == nil)
            #expect(try EntitledResponse(line: #"{"ok":true,"history":[{"actor":"local"}]}"#).history == [])
        }

        @Test func watchesIsTheConnectionsCount() throws {
            #expect(try EntitledResponse(line: #"{"ok":true,"watches":2}"#).watches == 2)
            #expect(try EntitledResponse(line: Self.guestGrant).watches == nil)
        }

        @Test func aPushedLineIsReadWithItsCauseAndMembership() throws {
            let push = try #require(EntitledPush(pushedLine: Self.push))
            #expect(push.line == Self.push)
            #expect(push.kind == "access")
            #expect(push.cause == "cancellation")
            #expect(push.membership?.status == "canceled")
            #expect(push.membership?.unsubscribeDetectedAt == "2026-11-23T00:00:00Z")
            #expect(push["cause"]?.stringValue == "cancellation")
        }

        @Test func answersAndOtherLinesAreNotPushes() {
            for line in [Self.guestGrant, #"{"ok":true,"push":"access"}"#, #"{"push":1}"#, "push", #"["push"]"#, #"{"push":"access""#, ""] {
                #expect(EntitledPush(pushedLine: line) == nil, "\(line)")
            }
            #expect(EntitledPush(pushedLine: #"{"push":"x"}"#)?.kind == "x")
        }

        @Test func aRevokedLifetimeMembershipHasNoExpiryAndARevocation() throws {
            let membership = try #require(try EntitledResponse(line: Self.revoked).membership)
            #expect(membership.user == "user_42")
            #expect(membership.expiresAt == nil)
            #expect(membership.status == "revoked")
            #expect(!membership.isActive)
            #expect(membership.revokedAt == "2026-11-22T00:31:50.960Z")
            #expect(membership.reason == "refund")
        }

        @Test func aMembershipMissingARequiredFieldIsNotAMembership() throws {
            let withoutIsActive = #"{"ok":true,"membership":{"id":"m","productId":"p","status":"active","createdAt":"t","source":"manual"}}"#
            #expect(try EntitledResponse(line: withoutIsActive).membership == nil)
            let wrongType = #"{"ok":true,"membership":{"id":"m","productId":"p","status":"active","isActive":"yes","createdAt":"t","source":"manual"}}"#
            #expect(try EntitledResponse(line: wrongType).membership == nil)
        }

        @Test func aListingGivesItsMembershipsInTheServersOrder() throws {
            let memberships = try #require(try EntitledResponse(line: Self.memberships).memberships)
            #expect(memberships.map(\.id) == ["mem_dnc456md2j73z", "mem_bydn4qrrzzhrt", "mem_1ymr6jcw5jqzv"])
            #expect(memberships.map(\.device) == [nil, "dev_B", "dev_A"])
            #expect(try EntitledResponse(line: #"{"ok":true,"memberships":[]}"#).memberships?.isEmpty == true)
        }

        @Test func aListingSkipsEntriesThatAreNotMemberships() throws {
            let line = #"{"ok":true,"memberships":[{"id":"x"},{"id":"m","productId":"p","status":"active","isActive":true,"createdAt":"t","source":"manual"}]}"#
            #expect(try EntitledResponse(line: line).memberships?.map(\.id) == ["m"])
        }

        @Test func accessorsAreNilWhenTheResponseDoesNotCarryTheirField() throws {
            let response = try EntitledResponse(line: Self.guestGrant)
            #expect(response.memberships == nil)
            #expect(response.catalog == nil)
            #expect(try EntitledResponse(line: Self.memberships).membership == nil)
        }

        @Test func theCatalogKeepsTheServersOrder() throws {
            let catalog = try #require(try EntitledResponse(line: Self.catalog).catalog)
            #expect(catalog.map(\.entitlement) == ["beta", "pro"])
            #expect(catalog.map(\.products) == [[], ["prod_pro_monthly", "prod_pro_yearly"]])
            #expect(try EntitledResponse(line: #"{"ok":true,"entitlements":{}}"#).catalog?.isEmpty == true)
        }

        @Test func textThatIsNotJSONIsAMalformedResponseWithTheParsersReason() {
            #expect(Self.malformed("hello") == .malformedResponse(line: "hello", reason: "invalid JSON at byte 0: expected a value"))
            #expect(Self.malformed("") == .malformedResponse(line: "", reason: "invalid JSON at byte 0: expected a value, found the end of the text"))
            #expect(
                Self.malformed(#"{"ok":true} x"#)
                    == .malformedResponse(line: #"{"ok":true} x"#, reason: "invalid JSON at byte 12: unexpected text after the JSON value")
            )
        }

        @Test func jsonWithoutABooleanOKIsAMalformedResponse() {
            let reason = #"a response must be a JSON object with a boolean "ok""#
            for line in ["true", "[true]", #"{"id":1}"#, #"{"ok":"true"}"#, #"{"ok":null}"#, #"{"ok":1}"#] {
                #expect(Self.malformed(line) == .malformedResponse(line: line, reason: reason), "\(line)")
            }
        }
    }

    // MARK: - Client errors

    @Suite struct ClientErrors {
        @Test func cannotConnectNamesTheAddressAndTheReason() {
            let error = EntitledClientError.cannotConnect(address: .standard, reason: "connection refused")
            #expect(error.message == "cannot connect to 127.0.0.1:7117: connection refused")
            #expect(error.description == error.message)
            #expect(error.code == "cannot_connect")
        }

        @Test func everyCaseHasItsSentenceAndCode() {
            let socket = ServerAddress.unixSocket(path: "/run/entitled.sock")
            let cases: [(EntitledClientError, String, String)] = [
                (.connectionClosed(address: socket), "unix:/run/entitled.sock closed the connection before answering", "connection_closed"),
                (
                    .connectionFailed(address: .tcp(host: "::1", port: 7117), reason: "broken pipe"),
                    "lost the connection to [::1]:7117: broken pipe", "connection_failed"
                ),
                (.timedOut(address: .standard, seconds: 10), "no response from 127.0.0.1:7117 within 10 s", "timed_out"),
                (.malformedResponse(line: "hi", reason: "why"), "the server sent a line that is not a response (why): hi", "malformed_response"),
                (
                    .responseTooLarge(address: .standard, limit: 67_108_864),
                    "127.0.0.1:7117 sent a response longer than 67108864 bytes", "response_too_large"
                ),
                (
                    .authenticationFailed(address: .standard, failure: ServerFailure(code: .unauthorized, message: "the token is wrong")),
                    "127.0.0.1:7117 refused the token: the token is wrong", "authentication_failed"
                ),
            ]
            for (error, message, code) in cases {
                #expect(error.message == message)
                #expect(error.code == code)
            }
        }

        @Test func aTimeoutWithAFractionShowsTheFraction() {
            #expect(EntitledClientError.timedOut(address: .standard, seconds: 2.5).message == "no response from 127.0.0.1:7117 within 2.5 s")
            #expect(EntitledClientError.timedOut(address: .standard, seconds: 0.25).message == "no response from 127.0.0.1:7117 within 0.25 s")
        }

        @Test func aHugeTimeoutIsWrittenWithoutTrapping() {
            #expect(EntitledClientError.timedOut(address: .standard, seconds: 1e19).message == "no response from 127.0.0.1:7117 within 1e+19 s")
        }

        @Test func aConnectionClampsItsTimeoutToADay() {
            #expect(EntitledConnection(timeout: .infinity).timeout == EntitledConnection.maximumTimeout)
            #expect(EntitledConnection(timeout: 0).timeout == 0.001)
            #expect(EntitledConnection(timeout: .nan).timeout == 10)
        }

        @Test func aMalformedResponseShowsAtMost200CharactersOfTheLine() {
            let line = String(repeating: "a", count: 200) + String(repeating: "b", count: 50)
            let message = EntitledClientError.malformedResponse(line: line, reason: "r").message
            #expect(message == "the server sent a line that is not a response (r): " + String(repeating: "a", count: 200))
        }
    }

    // MARK: - Addresses

    @Suite struct ServerAddresses {
        @Test func theStandardAddressIsLoopbackPort7117() {
            #expect(ServerAddress.standard == .tcp(host: "127.0.0.1", port: 7117))
            #expect(ServerAddress.standard.description == "127.0.0.1:7117")
        }

        @Test func anIPv6HostIsBracketed() {
            #expect(ServerAddress.tcp(host: "::1", port: 7117).description == "[::1]:7117")
            #expect(ServerAddress.tcp(host: "fe80::1%eth0", port: 80).description == "[fe80::1%eth0]:80")
        }

        @Test func aHostNameIsWrittenAsIs() {
            #expect(ServerAddress.tcp(host: "entitled.internal", port: 443).description == "entitled.internal:443")
        }

        @Test func aUnixSocketIsWrittenWithItsScheme() {
            #expect(ServerAddress.unixSocket(path: "/run/entitled.sock").description == "unix:/run/entitled.sock")
        }
    }
}

@Suite struct ServerErrorCodeTests {
    @Test func everyCodeOfTheProtocolIsKnownByItsWireNameAndANewerOneIsKeptAsWritten() throws {
        for code in ServerErrorCode.known {
            #expect(ServerErrorCode(rawValue: code.rawValue) == code)
        }
        #expect(Set(ServerErrorCode.known.map(\.rawValue)).count == ServerErrorCode.known.count)
        #expect(ServerErrorCode(rawValue: "over_limit") == .overLimit)
        #expect(ServerErrorCode(rawValue: "rate_limited") == .unknown("rate_limited"))
        let failure = try #require(try EntitledResponse(line: #"{"ok":false,"error":{"code":"rate_limited","message":"slow down"}}"#).error)
        #expect(failure.code == .unknown("rate_limited"))
        #expect(failure.description == "rate_limited: slow down")
    }
}
