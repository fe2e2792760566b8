@testable import EntitledClient
import Testing

@testable import EntitledConsole

/// The text each command's answer is shown as, in plain style at a fixed moment
/// (2026-11-22T12:00:00Z, half a day after the protocol examples' grants).
@Suite struct ResponseRendererTests {
    let renderer = ResponseRenderer(style: .plain, now: Instants.afterExamples)

    func render(_ command: String, _ line: String) throws -> String {
        renderer.render(command: command, response: try response(line))
    }

    // MARK: check

    @Test func anActiveCheckShowsTheExpiryAndHowFarItIs() throws {
        #expect(try render("check", ProtocolLines.checkActiveUntil) == "active until 2026-12-22T00:31:45.833Z (in 29 days)")
    }

    @Test func anActiveCheckWithoutExpiryIsLifetime() throws {
        #expect(try render("check", ProtocolLines.checkActiveLifetime) == "active, lifetime")
    }

    @Test func anInactiveCheckSaysNotActive() throws {
        #expect(try render("check", ProtocolLines.checkInactive) == "not active")
    }

    @Test func anExpiryTheConsoleCannotReadIsShownAsWrittenWithoutAHint() throws {
        #expect(try render("check", #"{"ok":true,"active":true,"expiresAt":"someday"}"#) == "active until someday")
    }

    @Test func colorsMarkActiveGreenAndTheHintDim() throws {
        let colored = ResponseRenderer(style: TextStyle(usesColor: true), now: Instants.afterExamples)
        #expect(
            colored.render(command: "check", response: try response(ProtocolLines.checkActiveUntil))
                == "\u{1B}[32mactive\u{1B}[0m until 2026-12-22T00:31:45.833Z \u{1B}[2m(in 29 days)\u{1B}[0m"
        )
        #expect(colored.render(command: "check", response: try response(ProtocolLines.checkInactive)) == "\u{1B}[31mnot active\u{1B}[0m")
    }

    // MARK: grant, revoke, show

    @Test func aGrantIsShownAsAOneRowMembershipTable() throws {
        #expect(
            try render("grant", ProtocolLines.guestGrant) == """
                ID                 PRODUCT           STATUS  ACTIVE  EXPIRES                                SOURCE     OWNER
                mem_1ymr6jcw5jqzv  prod_pro_monthly  active  yes     2026-12-22T00:31:45.833Z (in 29 days)  app_store  device:dev_A (guest)
                """
        )
    }

    @Test func aRevokeShowsTheReasonBesideTheStatusAndLifetimeForNoExpiry() throws {
        #expect(
            try render("revoke", ProtocolLines.revoked) == """
                ID                 PRODUCT          STATUS            ACTIVE  EXPIRES   SOURCE       OWNER
                mem_dnc456md2j73z  prod_pro_yearly  revoked (refund)  no      lifetime  promotional  user:user_42
                """
        )
    }

    @Test func anExpiredGrantShowsItsPastExpiry() throws {
        #expect(
            try render("grant", ProtocolLines.expiredGrant) == """
                ID                 PRODUCT  STATUS   ACTIVE  EXPIRES                             SOURCE  OWNER
                mem_fg8dr9hvxd94a  old      expired  no      2020-01-01T00:00:00Z (6 years ago)  manual  device:dev_Z (guest)
                """
        )
    }

    @Test func showListsEveryMembershipAlignedWithTheOwnerOfEach() throws {
        #expect(
            try render("show", ProtocolLines.memberships) == """
                ID                 PRODUCT           STATUS            ACTIVE  EXPIRES                                SOURCE       OWNER
                mem_dnc456md2j73z  prod_pro_yearly   revoked (refund)  no      lifetime                               promotional  user:user_42
                mem_bydn4qrrzzhrt  prod_pro_yearly   active            yes     2027-12-20T23:00:00Z (in 13 months)    stripe       user:user_42 on device:dev_B
                mem_1ymr6jcw5jqzv  prod_pro_monthly  active            yes     2026-12-22T00:31:45.833Z (in 29 days)  app_store    user:user_42 on device:dev_A
                """
        )
    }

    @Test func showWithNoMembershipsSaysSo() throws {
        #expect(try render("show", ProtocolLines.noMemberships) == "(no memberships)")
    }

    @Test func colorsOfTheStatusLeaveTheColumnsAligned() throws {
        let colored = ResponseRenderer(style: TextStyle(usesColor: true), now: Instants.afterExamples)
        let lines = colored.render(command: "revoke", response: try response(ProtocolLines.revoked)).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(
            lines.last
                == "mem_dnc456md2j73z  prod_pro_yearly  \u{1B}[31mrevoked (refund)\u{1B}[0m  no      lifetime  promotional  user:user_42"
        )
    }

    @Test func everyStatusThatGrantsAccessIsGreenAndOneThatDoesNotIsYellow() throws {
        let colored = ResponseRenderer(style: TextStyle(usesColor: true), now: Instants.afterExamples)
        func statusCell(_ status: String, active: Bool) throws -> String {
            let line =
                #"{"ok":true,"membership":{"id":"mem_dnc456md2j73z","productId":"pro","user":"u1","status":"\#(status)","isActive":\#(active),"createdAt":"2026-11-22T00:31:45.834Z","expiresAt":null,"source":"app_store"}}"#
            let row = colored.render(command: "grant", response: try response(line)).split(separator: "\n").last ?? ""
            return String(row.split(separator: " ", omittingEmptySubsequences: true)[2])
        }
        for status in ["active", "trialing", "past_due", "canceled"] {
            #expect(try statusCell(status, active: true) == "\u{1B}[32m\(status)\u{1B}[0m")
        }
        for status in ["paused", "expired"] {
            #expect(try statusCell(status, active: false) == "\u{1B}[33m\(status)\u{1B}[0m")
        }
    }

    // MARK: claim, define, catalog, snapshot, ping

    @Test func claimCountsTheMovedMembershipsInSingularOrPlural() throws {
        #expect(try render("claim", ProtocolLines.claimedOne) == "claimed 1 membership")
        #expect(try render("claim", ProtocolLines.claimedNone) == "claimed 0 memberships")
        #expect(try render("claim", #"{"ok":true,"claimed":3}"#) == "claimed 3 memberships")
    }

    @Test func defineNamesTheProductsThatUnlockTheEntitlement() throws {
        #expect(try render("define", ProtocolLines.definePro) == "pro is unlocked by prod_pro_monthly, prod_pro_yearly")
        #expect(try render("define", ProtocolLines.defineBeta) == "beta is unlocked by no product")
    }

    @Test func catalogIsATableWithADashForNoProducts() throws {
        #expect(
            try render("catalog", ProtocolLines.catalog) == """
                ENTITLEMENT  PRODUCTS
                beta         -
                pro          prod_pro_monthly, prod_pro_yearly
                """
        )
    }

    @Test func anEmptyCatalogSaysSo() throws {
        #expect(try render("catalog", ProtocolLines.emptyCatalog) == "(no entitlements defined)")
    }

    @Test func snapshotDescribesTheWrittenFile() throws {
        #expect(
            try render("snapshot", ProtocolLines.snapshot)
                == "wrote snapshot-00000000000000000004.snap: 2 memberships, 166 bytes, through change 4, in 2 ms"
        )
        #expect(
            try render("snapshot", #"{"ok":true,"file":"s.snap","sequence":9,"bytes":10,"durationMs":0,"memberships":1}"#)
                == "wrote s.snap: 1 membership, 10 bytes, through change 9, in 0 ms"
        )
    }

    @Test func pingIsPong() throws {
        #expect(try render("ping", ProtocolLines.pong) == "pong")
    }

    // MARK: answers the console cannot show

    @Test func anAnswerWithoutTheExpectedFieldsIsShownAsTheServerWroteIt() throws {
        let line = #"{"ok":true,"id":3,"novel":{"a" : 1}}"#
        for command in ["grant", "revoke", "show", "claim", "define", "catalog", "snapshot"] {
            #expect(try render(command, line) == line, "\(command)")
        }
        #expect(try render("future", line) == line)
    }

    // MARK: failures

    @Test func aFailureShowsTheCodeThenTheServersMessage() throws {
        let failure = try #require(try response(ProtocolLines.revokeNotFound).error)
        #expect(renderer.failure(failure) == #"(error) not_found: no membership has the id "mem_0000000000000""#)
    }

    @Test func aColoredFailureHasTheCodeInRed() {
        let colored = ResponseRenderer(style: TextStyle(usesColor: true), now: 0)
        #expect(
            colored.failure(ServerFailure(code: "busy", message: "try later"))
                == "\u{1B}[31m(error) busy: \u{1B}[0mtry later"
        )
    }
}
