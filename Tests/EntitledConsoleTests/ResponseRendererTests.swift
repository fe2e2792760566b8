@testable import EntitledClient
import Testing

@testable import EntitledConsole

/// The text each command's answer is shown as, in plain style at a fixed moment
/// (2026-11-22T12:00:00Z, half a day after the protocol examples' grants).
@Suite struct ResponseRendererTests {
    let renderer = ResponseRenderer(style: .plain, now: Instants.afterExamples)

    func render(_ command: ConsoleCommand, _ line: String) throws -> String {
        renderer.render(command: command, response: try response(line))
    }

    // MARK: check

    @Test func anActiveCheckShowsTheExpiryAndHowFarItIs() throws {
        #expect(try render(.check, ProtocolLines.checkActiveUntil) == "active until 2026-12-22T00:31:45.833Z (in 29 days)")
    }

    @Test func anActiveCheckWithoutExpiryIsLifetime() throws {
        #expect(try render(.check, ProtocolLines.checkActiveLifetime) == "active, lifetime")
    }

    @Test func anInactiveCheckSaysNotActive() throws {
        #expect(try render(.check, ProtocolLines.checkInactive) == "not active")
    }

    @Test func anExpiryTheConsoleCannotReadIsShownAsWrittenWithoutAHint() throws {
        #expect(try render(.check, #"{"ok":true,"active":true,"expiresAt":"someday"}"#) == "active until someday")
    }

    @Test func colorsMarkActiveGreenAndTheHintDim() throws {
        let colored = ResponseRenderer(style: TextStyle(usesColor: true), now: Instants.afterExamples)
        #expect(
            colored.render(command: .check, response: try response(ProtocolLines.checkActiveUntil))
                == "\u{1B}[32mactive\u{1B}[0m until 2026-12-22T00:31:45.833Z \u{1B}[2m(in 29 days)\u{1B}[0m"
        )
        #expect(colored.render(command: .check, response: try response(ProtocolLines.checkInactive)) == "\u{1B}[31mnot active\u{1B}[0m")
    }

    // MARK: grant, revoke, show

    @Test func aGrantIsShownAsAOneRowMembershipTable() throws {
        #expect(
            try render(.grant, ProtocolLines.guestGrant) == """
                ID                 PRODUCT           STATUS  ACTIVE  EXPIRES                                RENEWS  SOURCE     OWNER
                mem_1ymr6jcw5jqzv  prod_pro_monthly  active  yes     2026-12-22T00:31:45.833Z (in 29 days)  no      app_store  device:dev_A (guest)
                """
        )
    }

    @Test func aRevokeShowsTheReasonBesideTheStatusAndLifetimeForNoExpiry() throws {
        #expect(
            try render(.revoke, ProtocolLines.revoked) == """
                ID                 PRODUCT          STATUS            ACTIVE  EXPIRES   RENEWS  SOURCE       OWNER
                mem_dnc456md2j73z  prod_pro_yearly  revoked (refund)  no      lifetime  no      promotional  user:user_42
                """
        )
    }

    @Test func anExpiredGrantShowsItsPastExpiry() throws {
        #expect(
            try render(.grant, ProtocolLines.expiredGrant) == """
                ID                 PRODUCT  STATUS   ACTIVE  EXPIRES                             RENEWS  SOURCE  OWNER
                mem_fg8dr9hvxd94a  old      expired  no      2020-01-01T00:00:00Z (6 years ago)  no      manual  device:dev_Z (guest)
                """
        )
    }

    @Test func showListsEveryMembershipAlignedWithTheOwnerOfEach() throws {
        #expect(
            try render(.show, ProtocolLines.memberships) == """
                ID                 PRODUCT           STATUS            ACTIVE  EXPIRES                                RENEWS  SOURCE       OWNER
                mem_dnc456md2j73z  prod_pro_yearly   revoked (refund)  no      lifetime                               no      promotional  user:user_42
                mem_bydn4qrrzzhrt  prod_pro_yearly   active            yes     2027-12-20T23:00:00Z (in 13 months)    no      stripe       user:user_42 on device:dev_B
                mem_1ymr6jcw5jqzv  prod_pro_monthly  active            yes     2026-12-22T00:31:45.833Z (in 29 days)  no      app_store    user:user_42 on device:dev_A
                """
        )
    }

    @Test func showWithNoMembershipsSaysSo() throws {
        #expect(try render(.show, ProtocolLines.noMemberships) == "(no memberships)")
    }

    @Test func colorsOfTheStatusLeaveTheColumnsAligned() throws {
        let colored = ResponseRenderer(style: TextStyle(usesColor: true), now: Instants.afterExamples)
        let lines = colored.render(command: .revoke, response: try response(ProtocolLines.revoked)).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(
            lines.last
                == "mem_dnc456md2j73z  prod_pro_yearly  \u{1B}[31mrevoked (refund)\u{1B}[0m  no      lifetime  no      promotional  user:user_42"
        )
    }

    @Test func everyStatusThatGrantsAccessIsGreenAndOneThatDoesNotIsYellow() throws {
        let colored = ResponseRenderer(style: TextStyle(usesColor: true), now: Instants.afterExamples)
        func statusCell(_ status: String, active: Bool) throws -> String {
            let line =
                #"{"ok":true,"membership":{"id":"mem_dnc456md2j73z","productId":"pro","user":"u1","status":"\#(status)","isActive":\#(active),"createdAt":"2026-11-22T00:31:45.834Z","expiresAt":null,"source":"app_store"}}"#
            let row = colored.render(command: .grant, response: try response(line)).split(separator: "\n").last ?? ""
            return String(row.split(separator: " ", omittingEmptySubsequences: true)[2])
        }
        for status in ["active", "trialing", "past_due", "canceled"] {
            #expect(try statusCell(status, active: true) == "\u{1B}[32m\(status)\u{1B}[0m")
        }
        for status in ["paused", "expired"] {
            #expect(try statusCell(status, active: false) == "\u{1B}[33m\(status)\u{1B}[0m")
        }
    }

    // MARK: the lifecycle in membership tables

    @Test func aStoreGrantShowsItsTrialStatusThatItRenewsAndItsSandbox() throws {
        #expect(
            try render(.grant, ProtocolLines.trialGrant) == """
                ID                 PRODUCT      STATUS    ACTIVE  EXPIRES                                RENEWS  SOURCE               OWNER
                mem_92dpedc461kg5  prod_plus_m  trialing  yes     2026-12-22T07:02:38.862Z (in 29 days)  yes     app_store (sandbox)  user:user_7 on device:dev_7
                """
        )
    }

    @Test func aReplayedGrantSaysNothingNewWasCreated() throws {
        #expect(
            try render(.grant, ProtocolLines.replayedGrant) == """
                ID                 PRODUCT      STATUS    ACTIVE  EXPIRES                                RENEWS  SOURCE               OWNER
                mem_92dpedc461kg5  prod_plus_m  trialing  yes     2026-12-22T07:02:38.862Z (in 29 days)  yes     app_store (sandbox)  user:user_7 on device:dev_7
                replayed: this purchase (its key or its original transaction) was granted before; this is its membership, nothing new was created
                """
        )
    }

    @Test func aTransferredGrantSaysWhoseThePurchaseWas() throws {
        #expect(
            try render(.grant, ProtocolLines.transferredGrant) == """
                ID                 PRODUCT               STATUS  ACTIVE  EXPIRES                                RENEWS  SOURCE     OWNER
                mem_02jvebs5y1bhz  prod_premium_monthly  active  yes     2026-12-26T11:39:02.621Z (in 33 days)  yes     app_store  user:user_10
                transferred: the purchase was user:user_9's; the transfer rule moved it to this user
                """
        )
    }

    @Test func aConflictingIdempotencyKeyIsShownAsTheServersConflict() throws {
        let failure = try #require(try response(ProtocolLines.conflict).error)
        #expect(
            renderer.failure(failure)
                == #"(error) conflict: the idempotency key "order-7" was used by an earlier grant that created membership mem_92dpedc461kg5 for another product, subject, plan or source; use a new key for a new grant"#
        )
    }

    // MARK: event

    @Test func anAppliedEventShowsTheMembershipItLeftThenApplied() throws {
        #expect(
            try render(.event, ProtocolLines.renewalApplied) == """
                ID                 PRODUCT      STATUS  ACTIVE  EXPIRES                             RENEWS  SOURCE               OWNER
                mem_92dpedc461kg5  prod_plus_m  active  yes     2027-01-22T00:00:00Z (in 2 months)  yes     app_store (sandbox)  user:user_7 on device:dev_7
                applied
                """
        )
    }

    @Test func aBillingIssueShowsSinceWhenAndTheGracePeriod() throws {
        #expect(
            try render(.event, ProtocolLines.billingIssue) == """
                ID                 PRODUCT      STATUS    ACTIVE  EXPIRES                             RENEWS  SOURCE               OWNER
                mem_92dpedc461kg5  prod_plus_m  past_due  yes     2027-01-22T00:00:00Z (in 2 months)  yes     app_store (sandbox)  user:user_7 on device:dev_7
                billing issue since 2026-12-23T00:00:00Z (in 30 days), grace period until 2027-02-06T00:00:00Z (in 2 months)
                applied
                """
        )
    }

    @Test func anIgnoredEventSaysWhyAndThatNothingChanged() throws {
        #expect(
            try render(.event, ProtocolLines.renewalDuplicate).split(separator: "\n").last
                == "not applied (duplicate): an event with this id was applied before; the membership is unchanged"
        )
        #expect(
            try render(.event, ProtocolLines.cancellationOutOfOrder).split(separator: "\n").last
                == "not applied (out_of_order): an event newer than this one was applied already; the membership is unchanged"
        )
        let revoked = ProtocolLines.renewalDuplicate.replacing(#""reason":"duplicate""#, with: #""reason":"revoked""#)
        #expect(
            try render(.event, revoked).split(separator: "\n").last
                == "not applied (revoked): the membership is revoked; the membership is unchanged"
        )
    }

    @Test func anIgnoredEventIsYellowAndAnAppliedOneGreen() throws {
        let colored = ResponseRenderer(style: TextStyle(usesColor: true), now: Instants.afterExamples)
        let applied = colored.render(command: .event, response: try response(ProtocolLines.renewalApplied))
        #expect(applied.hasSuffix("\n\u{1B}[32mapplied\u{1B}[0m"))
        let ignored = colored.render(command: .event, response: try response(ProtocolLines.renewalDuplicate))
        #expect(ignored.split(separator: "\n").last?.hasPrefix("\u{1B}[33mnot applied (duplicate): \u{1B}[0m") == true)
    }

    @Test func cancellationAndPauseAreNotedUnderTheTable() throws {
        let line = ProtocolLines.renewalApplied.replacing(
            #""grantType":"purchase","transactions""#,
            with: #""grantType":"purchase","unsubscribeDetectedAt":"2026-12-03T00:00:00Z","pausedAt":"2026-12-04T00:00:00Z","transactions""#
        )
        let lines = try render(.event, line).split(separator: "\n")
        #expect(lines.count == 5)
        #expect(lines[2] == "renewal turned off 2026-12-03T00:00:00Z (in 10 days)")
        #expect(lines[3] == "paused since 2026-12-04T00:00:00Z (in 11 days)")
    }

    // MARK: customer

    @Test func customerIsATableOfEntitlementsThenTheProductsAndDates() throws {
        #expect(
            try render(.customer, ProtocolLines.customer) == """
                ENTITLEMENT  ACTIVE  PRODUCT      EXPIRES                             RENEWS  PERIOD  STORE      MEMBERSHIP         NOTES
                plus         yes     prod_plus_m  2027-02-06T00:00:00Z (in 2 months)  yes     normal  app_store  mem_92dpedc461kg5  billing issue since 2026-12-23T00:00:00Z
                active products: prod_plus_m
                purchased products: prod_plus_m
                latest expiration: 2027-01-22T00:00:00Z (in 2 months)
                first seen: 2026-11-22T07:02:38.862Z (4 hours ago)
                """
        )
    }

    @Test func aCustomerTheServerHasNeverSeenHasNoEntitlementsAndDashes() throws {
        #expect(
            try render(.customer, ProtocolLines.customerUnknown) == """
                (no entitlements)
                active products: -
                purchased products: -
                latest expiration: -
                first seen: never
                """
        )
    }

    // MARK: history

    @Test func historyIsATableNewestFirstWithActorActionMembershipProductAndReason() throws {
        #expect(
            try render(.history, ProtocolLines.history) == """
                TIME                                    ACTOR  ACTION         MEMBERSHIP         PRODUCT        REASON
                2026-11-22T07:02:38.865Z (4 hours ago)  local  revoke         mem_cz4anm64j98tp  prod_lifetime  refund
                2026-11-22T07:02:38.865Z (4 hours ago)  local  claim          mem_cz4anm64j98tp  prod_lifetime  login
                2026-11-22T07:02:38.865Z (4 hours ago)  local  grant          mem_cz4anm64j98tp  prod_lifetime  -
                2026-11-22T07:02:38.864Z (4 hours ago)  local  billing_issue  mem_92dpedc461kg5  prod_plus_m    card declined
                2026-11-22T07:02:38.863Z (4 hours ago)  local  renewal        mem_92dpedc461kg5  prod_plus_m    -
                2026-11-22T07:02:38.862Z (4 hours ago)  local  grant          mem_92dpedc461kg5  prod_plus_m    first purchase
                """
        )
    }

    @Test func anEntitlementsHistoryListsItsDefinitions() throws {
        #expect(
            try render(.history, ProtocolLines.historyEntitlement) == """
                TIME                                    ACTOR  ACTION  ENTITLEMENT  PRODUCTS                  REASON
                2026-11-22T07:02:38.861Z (4 hours ago)  local  define  plus         prod_plus_m, prod_plus_y  launch
                """
        )
        #expect(
            try render(.history, #"{"ok":true,"history":[{"time":"2026-11-22T07:02:38.861Z","actor":"admin","action":"define","entitlement":"beta","products":[]}]}"#)
                == """
                TIME                                    ACTOR  ACTION  ENTITLEMENT  PRODUCTS  REASON
                2026-11-22T07:02:38.861Z (4 hours ago)  admin  define  beta         (none)    -
                """
        )
    }

    @Test func anEmptyHistorySaysSo() throws {
        #expect(try render(.history, ProtocolLines.historyEmpty) == "(no history)")
    }

    // MARK: watch, unwatch, pushed lines

    @Test func watchAndUnwatchCountTheConnectionsWatches() throws {
        #expect(try render(.watch, ProtocolLines.watch) == "1 watch on this connection; changes are shown as the server pushes them")
        #expect(try render(.watch, #"{"ok":true,"watches":3}"#) == "3 watches on this connection; changes are shown as the server pushes them")
        #expect(try render(.unwatch, #"{"ok":true,"watches":2}"#) == "2 watches on this connection")
        #expect(try render(.unwatch, ProtocolLines.unwatch) == "no watches on this connection")
    }

    @Test func aPushedLineIsOneLineWithItsCauseTheMembershipAndItsAccess() throws {
        func push(_ line: String) throws -> String { renderer.push(try #require(EntitledPush(pushedLine: line))) }
        #expect(
            try push(ProtocolLines.pushGrant)
                == "push grant: mem_2p12nek6vz5pf prod_plus_m active, access until 2026-12-22T07:02:59.507Z (in 29 days), user:user_9"
        )
        #expect(
            try push(ProtocolLines.pushCancellation)
                == "push cancellation: mem_2p12nek6vz5pf prod_plus_m canceled, access until 2026-12-22T07:02:59.507Z (in 29 days), user:user_9"
        )
        let expired = #"{"push":"access","cause":"expired","membership":{"id":"mem_6zh50p4zgsy2d","productId":"short","device":"d9","status":"expired","isActive":false,"createdAt":"2026-11-22T07:02:12.264Z","expiresAt":"2026-11-22T07:02:14.264Z","source":"manual","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}}"#
        #expect(try push(expired) == "push expired: mem_6zh50p4zgsy2d short expired, no access through it, device:d9 (guest)")
        // With what the owner still has (its `customer` view read after the change).
        func push(_ line: String, remaining: String) throws -> String {
            renderer.push(try #require(EntitledPush(pushedLine: line)), remaining: try EntitledResponse(line: remaining))
        }
        let stillPro = #"{"ok":true,"customer":{"entitlements":{"pro":{"isActive":true,"productId":"long","expiresAt":null},"old":{"isActive":false,"productId":"short","expiresAt":"2026-11-22T07:02:14.264Z"}},"activeProducts":["long"]}}"#
        #expect(try push(expired, remaining: stillPro) == "push expired: mem_6zh50p4zgsy2d short expired, no access through it, device:d9 (guest); device:d9 still has pro for life")
        let productOnly = #"{"ok":true,"customer":{"entitlements":{},"activeProducts":["prod_x","prod_y"]}}"#
        #expect(try push(expired, remaining: productOnly).hasSuffix("; device:d9 still has prod_x, prod_y"))
        let nothing = #"{"ok":true,"customer":{"entitlements":{},"activeProducts":[]}}"#
        #expect(try push(expired, remaining: nothing).hasSuffix("; device:d9 has no access left"))
        // An active membership's push needs no such word.
        #expect(try push(ProtocolLines.pushGrant, remaining: nothing) == (try push(ProtocolLines.pushGrant)))
        let lifetime = ProtocolLines.pushGrant.replacing(#""expiresAt":"2026-12-22T07:02:59.507Z""#, with: #""expiresAt":null"#)
        #expect(try push(lifetime).contains("active, access for life, user:user_9"))
    }

    @Test func aPushWithoutAMembershipIsShownAsTheServerWroteIt() throws {
        let line = #"{"push":"catalog","entitlement":"pro"}"#
        #expect(renderer.push(try #require(EntitledPush(pushedLine: line))) == line)
    }

    // MARK: claim, define, catalog, snapshot, ping

    @Test func claimCountsTheMovedMembershipsInSingularOrPlural() throws {
        #expect(try render(.claim, ProtocolLines.claimedOne) == "claimed 1 membership")
        #expect(try render(.claim, ProtocolLines.claimedNone) == "claimed 0 memberships")
        #expect(try render(.claim, #"{"ok":true,"claimed":3}"#) == "claimed 3 memberships")
    }

    @Test func defineNamesTheProductsThatUnlockTheEntitlement() throws {
        #expect(try render(.define, ProtocolLines.definePro) == "pro is unlocked by prod_pro_monthly, prod_pro_yearly")
        #expect(try render(.define, ProtocolLines.defineBeta) == "beta is unlocked by no product")
    }

    @Test func catalogIsATableWithADashForNoProducts() throws {
        #expect(
            try render(.catalog, ProtocolLines.catalog) == """
                ENTITLEMENT  PRODUCTS
                beta         -
                pro          prod_pro_monthly, prod_pro_yearly
                """
        )
    }

    @Test func anEmptyCatalogSaysSo() throws {
        #expect(try render(.catalog, ProtocolLines.emptyCatalog) == "(no entitlements defined)")
    }

    @Test func snapshotDescribesTheWrittenFile() throws {
        #expect(
            try render(.snapshot, ProtocolLines.snapshot)
                == "wrote snapshot-00000000000000000004.snap: 2 memberships, 166 bytes, through change 4, in 2 ms"
        )
        #expect(
            try render(.snapshot, #"{"ok":true,"file":"s.snap","sequence":9,"bytes":10,"durationMs":0,"memberships":1}"#)
                == "wrote s.snap: 1 membership, 10 bytes, through change 9, in 0 ms"
        )
    }

    @Test func pingIsPong() throws {
        #expect(try render(.ping, ProtocolLines.pong) == "pong")
    }

    // MARK: answers the console cannot show

    @Test func anAnswerWithoutTheExpectedFieldsIsShownAsTheServerWroteIt() throws {
        let line = #"{"ok":true,"id":3,"novel":{"a" : 1}}"#
        let commands: [ConsoleCommand] = [
            .grant, .revoke, .event, .show, .customer, .history, .watch, .unwatch, .claim, .define, .catalog, .snapshot, .export, .raw,
        ]
        for command in commands {
            #expect(try render(command, line) == line, "\(command)")
        }
    }

    // MARK: failures

    @Test func aFailureShowsTheCodeThenTheServersMessage() throws {
        let failure = try #require(try response(ProtocolLines.revokeNotFound).error)
        #expect(renderer.failure(failure) == #"(error) not_found: no membership has the id "mem_0000000000000""#)
    }

    @Test func aColoredFailureHasTheCodeInRed() {
        let colored = ResponseRenderer(style: TextStyle(usesColor: true), now: 0)
        #expect(
            colored.failure(ServerFailure(code: .busy, message: "try later"))
                == "\u{1B}[31m(error) busy: \u{1B}[0mtry later"
        )
    }
}
