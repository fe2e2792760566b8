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

        @Test func claimWritesDeviceThenUser() {
            #expect(EntitledRequest.claim(device: "d1", user: "u1").jsonLine == #"{"op":"claim","device":"d1","user":"u1"}"#)
        }

        @Test func revokeWritesTheReasonOnlyWhenGiven() {
            #expect(EntitledRequest.revoke(membership: "mem_x").jsonLine == #"{"op":"revoke","membership":"mem_x"}"#)
            #expect(
                EntitledRequest.revoke(membership: "mem_x", reason: "refund").jsonLine
                    == #"{"op":"revoke","membership":"mem_x","reason":"refund"}"#
            )
        }

        @Test func membershipsWritesUserDeviceAt() {
            #expect(EntitledRequest.memberships(device: "d1").jsonLine == #"{"op":"memberships","device":"d1"}"#)
            #expect(
                EntitledRequest.memberships(user: "u1", device: "d1", at: "2027-01-01T00:00:00Z").jsonLine
                    == #"{"op":"memberships","user":"u1","device":"d1","at":"2027-01-01T00:00:00Z"}"#
            )
        }

        @Test func defineWritesTheProductsAsAnArrayAsGiven() {
            #expect(
                EntitledRequest.define(entitlement: "pro", products: ["prod_y", "prod_m", "prod_m"]).jsonLine
                    == #"{"op":"define","entitlement":"pro","products":["prod_y","prod_m","prod_m"]}"#
            )
            #expect(EntitledRequest.define(entitlement: "beta", products: []).jsonLine == #"{"op":"define","entitlement":"beta","products":[]}"#)
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
            #expect(response.error == ServerFailure(code: "not_found", message: #"no membership has the id "mem_0000000000000""#))
            #expect(response.error?.description == #"not_found: no membership has the id "mem_0000000000000""#)
        }

        @Test func anErrorResponseWithoutDetailsStillHasACodeAndMessage() throws {
            #expect(try EntitledResponse(line: #"{"ok":false}"#).error == ServerFailure(code: "unknown", message: "the server gave no message"))
            #expect(
                try EntitledResponse(line: #"{"ok":false,"error":{"code":"busy"}}"#).error
                    == ServerFailure(code: "busy", message: "the server gave no message")
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
                    .authenticationFailed(address: .standard, failure: ServerFailure(code: "unauthorized", message: "the token is wrong")),
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
