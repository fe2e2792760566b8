import EntitledClient
import EntitledConsole
import Testing

/// The protocol request each console command sends, compared as the exact line that goes on the wire.
@Suite struct CommandParserRequestTests {
    // MARK: check

    @Test func checkWithAUserAndAnEntitlementAsksAboutTheEntitlement() throws {
        #expect(
            try sentRequest("check user:u1 entitlement:pro")
                == SentRequest(command: .check, line: #"{"op":"check","user":"u1","entitlement":"pro"}"#)
        )
    }

    @Test func checkWritesSubjectProductAndTimeInProtocolOrderWhateverTheTypedOrder() throws {
        #expect(
            try sentRequest("check at=2027-01-01T10:00:00Z prod_pro device:d1 user:u1")
                == SentRequest(
                    command: .check,
                    line: #"{"op":"check","user":"u1","device":"d1","product":"prod_pro","at":"2027-01-01T10:00:00Z"}"#
                )
        )
    }

    @Test func checkWithoutATargetCountsAnyProduct() throws {
        #expect(try sentRequest("check device:d1")?.line == #"{"op":"check","device":"d1"}"#)
    }

    @Test func checkAtABareDateMeansMidnightUTC() throws {
        #expect(
            try sentRequest("check user:u1 at=2027-01-01")?.line
                == #"{"op":"check","user":"u1","at":"2027-01-01T00:00:00Z"}"#
        )
    }

    @Test func checkReadsPrefixesAndOptionNamesWithoutRegardToCaseButKeepsTheValuesCase() throws {
        #expect(
            try sentRequest("Check USER:Alice Entitlement:Pro AT=2027-01-01")?.line
                == #"{"op":"check","user":"Alice","entitlement":"Pro","at":"2027-01-01T00:00:00Z"}"#
        )
    }

    // MARK: grant

    @Test func grantOfADurationToADeviceWritesTheFieldsInTheConstructorsOrder() throws {
        #expect(
            try sentRequest("grant device:d1 prod_pro 30d source=app_store")
                == SentRequest(
                    command: .grant,
                    line: #"{"op":"grant","device":"d1","product":"prod_pro","source":"app_store","duration":"30d"}"#
                )
        )
    }

    @Test func grantWithUntilDateMeansMidnightUTC() throws {
        #expect(
            try sentRequest("grant user:u1 prod_pro until 2027-01-01")?.line
                == #"{"op":"grant","user":"u1","product":"prod_pro","expiresAt":"2027-01-01T00:00:00Z"}"#
        )
    }

    @Test func grantWithUntilAFullTimePassesItOnUnchanged() throws {
        #expect(
            try sentRequest("grant user:u1 prod_pro until 2027-12-21T00:00:00+01:00")?.line
                == #"{"op":"grant","user":"u1","product":"prod_pro","expiresAt":"2027-12-21T00:00:00+01:00"}"#
        )
    }

    @Test func grantLifetimeSendsNeitherExpiryNorDuration() throws {
        #expect(try sentRequest("grant user:u1 prod_pro lifetime")?.line == #"{"op":"grant","user":"u1","product":"prod_pro"}"#)
        #expect(try sentRequest("grant user:u1 prod_pro LIFETIME")?.line == #"{"op":"grant","user":"u1","product":"prod_pro"}"#)
        #expect(try sentRequest("grant user:u1 prod_pro")?.line == #"{"op":"grant","user":"u1","product":"prod_pro"}"#)
    }

    @Test func grantWithEveryFieldWritesUserDeviceProductPlanSourceExpiry() throws {
        #expect(
            try sentRequest("grant plan=plan_y prod_y source=stripe device:d2 user:u2 UNTIL 2027-06-30")?.line
                == #"{"op":"grant","user":"u2","device":"d2","product":"prod_y","plan":"plan_y","source":"stripe","expiresAt":"2027-06-30T00:00:00Z"}"#
        )
    }

    @Test func grantAcceptsEveryDurationUnit() throws {
        for duration in ["45s", "90min", "12h", "30d", "2w", "1mo", "1y"] {
            #expect(
                try sentRequest("grant device:d1 p \(duration)")?.line
                    == #"{"op":"grant","device":"d1","product":"p","duration":"\#(duration)"}"#
            )
        }
    }

    @Test func grantOptionsForAStorePurchaseBecomeTheLifecycleFieldsInProtocolOrder() throws {
        #expect(
            try sentRequest(
                #"grant user:u1 prod_pro 30d source=app_store reason="first purchase" key=order-7 original=tx_1 transaction=tx_2 type=offer_code ownership=family_shared env=sandbox period=trial renews=yes"#
            )?.line
                == #"{"op":"grant","user":"u1","product":"prod_pro","source":"app_store","duration":"30d","willRenew":true,"periodType":"trial","environment":"sandbox","ownership":"family_shared","grantType":"offer_code","transactionId":"tx_2","originalTransactionId":"tx_1","idempotencyKey":"order-7","reason":"first purchase"}"#
        )
    }

    @Test func grantRenewsTakesYesOrNoAndTrueOrFalseAsAJSONBoolean() throws {
        for (word, value) in [("yes", "true"), ("YES", "true"), ("true", "true"), ("no", "false"), ("false", "false")] {
            #expect(
                try sentRequest("grant user:u1 p renews=\(word)")?.line == #"{"op":"grant","user":"u1","product":"p","willRenew":\#(value)}"#,
                "\(word)"
            )
        }
    }

    @Test func grantWithoutLifecycleOptionsSendsNoneOfTheirFields() throws {
        #expect(try sentRequest("grant user:u1 prod_pro 30d")?.line == #"{"op":"grant","user":"u1","product":"prod_pro","duration":"30d"}"#)
    }

    // MARK: claim

    @Test func claimSendsDeviceThenUserWhateverTheTypedOrder() throws {
        let expected = SentRequest(command: .claim, line: #"{"op":"claim","device":"d1","user":"u1"}"#)
        #expect(try sentRequest("claim device:d1 user:u1") == expected)
        #expect(try sentRequest("claim user:u1 device:d1") == expected)
    }

    @Test func claimWithAReasonKeepsItForTheHistory() throws {
        #expect(
            try sentRequest("claim device:d1 user:u1 reason=login")?.line
                == #"{"op":"claim","device":"d1","user":"u1","reason":"login"}"#
        )
    }

    // MARK: revoke

    @Test func revokeWithoutAReasonLeavesTheReasonToTheServer() throws {
        #expect(
            try sentRequest("revoke mem_1ymr6jcw5jqzv")
                == SentRequest(command: .revoke, line: #"{"op":"revoke","membership":"mem_1ymr6jcw5jqzv"}"#)
        )
    }

    @Test func revokeWithAQuotedReasonKeepsItsSpaces() throws {
        #expect(
            try sentRequest(#"revoke mem_x "customer  asked""#)?.line
                == #"{"op":"revoke","membership":"mem_x","reason":"customer  asked"}"#
        )
        #expect(
            try sentRequest("revoke mem_x 'card stolen'")?.line
                == #"{"op":"revoke","membership":"mem_x","reason":"card stolen"}"#
        )
    }

    @Test func revokeJoinsUnquotedReasonWordsWithOneSpace() throws {
        #expect(
            try sentRequest("revoke mem_x   customer    asked")?.line
                == #"{"op":"revoke","membership":"mem_x","reason":"customer asked"}"#
        )
    }

    @Test func revokeReasonWithEscapedQuotesIsEscapedAgainInTheRequest() throws {
        #expect(
            try sentRequest(#"revoke mem_x "said \"refund\" twice""#)?.line
                == #"{"op":"revoke","membership":"mem_x","reason":"said \"refund\" twice"}"#
        )
    }

    @Test func revokeWithAnExplicitlyEmptyReasonPassesItOnForTheServerToJudge() throws {
        #expect(try sentRequest(#"revoke mem_x """#)?.line == #"{"op":"revoke","membership":"mem_x","reason":""}"#)
    }

    // MARK: extend

    @Test func extendByADurationSendsTheDurationAndTheWordsAfterItAsTheReason() throws {
        #expect(
            try sentRequest("extend mem_1ymr6jcw5jqzv 1mo outage on 2026-11-20")
                == SentRequest(
                    command: .extend,
                    line: #"{"op":"extend","membership":"mem_1ymr6jcw5jqzv","duration":"1mo","reason":"outage on 2026-11-20"}"#
                )
        )
    }

    @Test func extendWithoutAReasonLeavesItOut() throws {
        #expect(try sentRequest("extend mem_x 7d")?.line == #"{"op":"extend","membership":"mem_x","duration":"7d"}"#)
    }

    @Test func extendAcceptsEveryDurationUnitAsGrantDoes() throws {
        for duration in ["45s", "90min", "12h", "30d", "2w", "1mo", "1y"] {
            #expect(
                try sentRequest("extend mem_x \(duration)")?.line == #"{"op":"extend","membership":"mem_x","duration":"\#(duration)"}"#
            )
        }
    }

    @Test func extendToATimeSendsItAsTheNewExpiry() throws {
        #expect(
            try sentRequest("extend mem_x 2031-12-24T00:00:00Z")
                == SentRequest(command: .extend, line: #"{"op":"extend","membership":"mem_x","expiresAt":"2031-12-24T00:00:00Z"}"#)
        )
        #expect(
            try sentRequest("extend mem_x 2027-12-21T09:30:00.250+01:00 goodwill")?.line
                == #"{"op":"extend","membership":"mem_x","expiresAt":"2027-12-21T09:30:00.250+01:00","reason":"goodwill"}"#
        )
    }

    @Test func extendToABareDateMeansMidnightUTC() throws {
        #expect(
            try sentRequest("extend mem_x 2027-01-01")?.line == #"{"op":"extend","membership":"mem_x","expiresAt":"2027-01-01T00:00:00Z"}"#
        )
    }

    @Test func extendUntilATimeIsReadAsGrantReadsIt() throws {
        #expect(
            try sentRequest("extend mem_x UNTIL 2027-01-01 store outage")?.line
                == #"{"op":"extend","membership":"mem_x","expiresAt":"2027-01-01T00:00:00Z","reason":"store outage"}"#
        )
    }

    @Test func extendWithAQuotedReasonKeepsItsSpaces() throws {
        #expect(
            try sentRequest(#"extend mem_x 1w "outage  of the store""#)?.line
                == #"{"op":"extend","membership":"mem_x","duration":"1w","reason":"outage  of the store"}"#
        )
        #expect(
            try sentRequest(words: ["extend", "mem_x", "1w", "outage of the store"])?.line
                == #"{"op":"extend","membership":"mem_x","duration":"1w","reason":"outage of the store"}"#
        )
    }

    // MARK: event

    /// 2026-11-22T12:00:00Z, the time `event` defaults to in these tests.
    static let now: Int64 = 1_795_348_800_000

    func sentEvent(_ line: String) throws(ConsoleUsageError) -> SentRequest? {
        guard case .request(let command, let request)? = try CommandParser.parse(line: line, now: Self.now) else { return nil }
        return SentRequest(command: command, line: request.jsonLine)
    }

    @Test func eventSendsTheMembershipTypeIdAndTimeItHappened() throws {
        #expect(
            try sentEvent("event mem_x cancellation id=evt_1 at=2026-12-03T10:00:00Z")
                == SentRequest(
                    command: .event,
                    line: #"{"op":"event","membership":"mem_x","type":"cancellation","eventId":"evt_1","eventTime":"2026-12-03T10:00:00Z"}"#
                )
        )
    }

    @Test func eventWithoutATimeHappenedNowWithMilliseconds() throws {
        #expect(
            try sentEvent("event mem_x refund id=evt_2")?.line
                == #"{"op":"event","membership":"mem_x","type":"refund","eventId":"evt_2","eventTime":"2026-11-22T12:00:00.000Z"}"#
        )
    }

    @Test func eventUntilIsTheNewExpiryAndABareDateMeansMidnightUTC() throws {
        #expect(
            try sentEvent("event mem_x renewal id=evt_3 at=2026-12-22 until 2027-01-22")?.line
                == #"{"op":"event","membership":"mem_x","type":"renewal","eventId":"evt_3","eventTime":"2026-12-22T00:00:00Z","expiresAt":"2027-01-22T00:00:00Z"}"#
        )
        #expect(
            try sentEvent("event mem_x resume UNTIL 2027-01-22T08:00:00Z id=evt_4")?.line
                == #"{"op":"event","membership":"mem_x","type":"resume","eventId":"evt_4","eventTime":"2026-11-22T12:00:00.000Z","expiresAt":"2027-01-22T08:00:00Z"}"#
        )
    }

    @Test func eventOptionsBecomeTheirFieldsInProtocolOrder() throws {
        #expect(
            try sentEvent(#"event mem_x billing_issue reason="card declined" transaction=tx_9 grace=2027-02-06 id=evt_5 at=2026-12-23"#)?.line
                == #"{"op":"event","membership":"mem_x","type":"billing_issue","eventId":"evt_5","eventTime":"2026-12-23T00:00:00Z","gracePeriodExpiresAt":"2027-02-06T00:00:00Z","transactionId":"tx_9","reason":"card declined"}"#
        )
        #expect(
            try sentEvent("event mem_x product_change product=prod_pro_y id=evt_6 at=2026-12-24")?.line
                == #"{"op":"event","membership":"mem_x","type":"product_change","eventId":"evt_6","eventTime":"2026-12-24T00:00:00Z","product":"prod_pro_y"}"#
        )
    }

    @Test func eventTypesAreSentInLowerCaseAndTheServerJudgesThem() throws {
        #expect(try sentEvent("event mem_x Billing_Recovered id=e")?.line.contains(#""type":"billing_recovered""#) == true)
        #expect(try sentEvent("event mem_x frobnicated id=e")?.line.contains(#""type":"frobnicated""#) == true)
    }

    // MARK: customer, history

    @Test func customerAsksForTheSubject() throws {
        #expect(
            try sentRequest("customer user:u1 device:d1")
                == SentRequest(command: .customer, line: #"{"op":"customer","user":"u1","device":"d1"}"#)
        )
        #expect(try sentRequest("CUSTOMER Device:d1")?.line == #"{"op":"customer","device":"d1"}"#)
    }

    @Test func historyOfASubjectOrAnEntitlementWithAnOptionalLimitAsANumber() throws {
        #expect(try sentRequest("history user:u1") == SentRequest(command: .history, line: #"{"op":"history","user":"u1"}"#))
        #expect(try sentRequest("history device:d1 user:u1 limit=20")?.line == #"{"op":"history","user":"u1","device":"d1","limit":20}"#)
        #expect(try sentRequest("history entitlement:pro")?.line == #"{"op":"history","entitlement":"pro"}"#)
        #expect(try sentRequest("history LIMIT=1000 Entitlement:Pro")?.line == #"{"op":"history","entitlement":"Pro","limit":1000}"#)
    }

    @Test func historyLeavesTheLimitsRangeToTheServer() throws {
        #expect(try sentRequest("history user:u1 limit=0")?.line == #"{"op":"history","user":"u1","limit":0}"#)
        #expect(try sentRequest("history user:u1 limit=5000")?.line == #"{"op":"history","user":"u1","limit":5000}"#)
    }

    // MARK: watch, unwatch

    @Test func watchASubjectOrEveryone() throws {
        #expect(try sentRequest("watch user:u1") == SentRequest(command: .watch, line: #"{"op":"watch","user":"u1"}"#))
        #expect(try sentRequest("watch device:d1 user:u1")?.line == #"{"op":"watch","user":"u1","device":"d1"}"#)
        #expect(try sentRequest("watch ALL") == SentRequest(command: .watch, line: #"{"op":"watch","all":true}"#))
    }

    @Test func unwatchASubjectEveryoneOrWithNothingEveryWatch() throws {
        #expect(try sentRequest("unwatch user:u1") == SentRequest(command: .unwatch, line: #"{"op":"unwatch","user":"u1"}"#))
        #expect(try sentRequest("unwatch all")?.line == #"{"op":"unwatch","all":true}"#)
        #expect(try sentRequest("unwatch")?.line == #"{"op":"unwatch"}"#)
    }

    // MARK: show

    @Test func showAsksForTheMembershipsOperation() throws {
        #expect(
            try sentRequest("show user:u1 device:d1")
                == SentRequest(command: .show, line: #"{"op":"memberships","user":"u1","device":"d1"}"#)
        )
    }

    @Test func showAtABareDateMeansMidnightUTC() throws {
        #expect(
            try sentRequest("show device:d1 at=2027-01-01")?.line
                == #"{"op":"memberships","device":"d1","at":"2027-01-01T00:00:00Z"}"#
        )
    }

    @Test func showFindsTheMembershipsOfAStoreTransaction() throws {
        #expect(
            try sentRequest("show transaction=2000000456")
                == SentRequest(command: .show, line: #"{"op":"memberships","transactionId":"2000000456"}"#)
        )
        #expect(try sentRequest("show original=2000000123")?.line == #"{"op":"memberships","originalTransactionId":"2000000123"}"#)
    }

    // MARK: define

    @Test func defineSendsTheProductsAsAnArrayInTheTypedOrder() throws {
        #expect(
            try sentRequest("define pro prod_pro_y prod_pro_m")
                == SentRequest(command: .define, line: #"{"op":"define","entitlement":"pro","products":["prod_pro_y","prod_pro_m"]}"#)
        )
    }

    @Test func defineTakesAReasonWhereverItIsTyped() throws {
        #expect(
            try sentRequest("define pro reason=launch prod_pro_y prod_pro_m")?.line
                == #"{"op":"define","entitlement":"pro","products":["prod_pro_y","prod_pro_m"],"reason":"launch"}"#
        )
    }


    // MARK: commands without arguments

    @Test func catalogSnapshotAndPingSendTheirOperationAlone() throws {
        #expect(try sentRequest("catalog") == SentRequest(command: .catalog, line: #"{"op":"catalog"}"#))
        #expect(try sentRequest("snapshot") == SentRequest(command: .snapshot, line: #"{"op":"snapshot"}"#))
        #expect(try sentRequest("ping") == SentRequest(command: .ping, line: #"{"op":"ping"}"#))
    }

    @Test func commandNamesAreCaseInsensitiveAndTheCommandIsReportedInLowerCase() throws {
        #expect(try sentRequest("PING") == SentRequest(command: .ping, line: #"{"op":"ping"}"#))
        #expect(
            try sentRequest("GrAnT device:d1 prod_pro 7d")
                == SentRequest(command: .grant, line: #"{"op":"grant","device":"d1","product":"prod_pro","duration":"7d"}"#)
        )
        #expect(try sentRequest("SHOW user:u1")?.command == .show)
    }

    @Test func surroundingWhitespaceAndTabsAreIgnored() throws {
        #expect(try sentRequest("  \tcheck\tuser:u1   prod_pro  ")?.line == #"{"op":"check","user":"u1","product":"prod_pro"}"#)
    }

    // MARK: words from a shell

    @Test func wordsFromTheShellKeepTheirSpacesWithoutQuoting() throws {
        #expect(
            try sentRequest(words: ["revoke", "mem_x", "customer asked"])?.line
                == #"{"op":"revoke","membership":"mem_x","reason":"customer asked"}"#
        )
        #expect(
            try sentRequest(words: ["grant", "device:d1", "prod_pro", "30d", "source=app_store"])?.line
                == #"{"op":"grant","device":"d1","product":"prod_pro","source":"app_store","duration":"30d"}"#
        )
    }

    @Test func wordsAreNotSplitAgainSoAQuoteInsideOneIsKept() throws {
        #expect(
            try sentRequest(words: ["define", #"it"s"#, "p1"])?.line == #"{"op":"define","entitlement":"it\"s","products":["p1"]}"#
        )
    }

    // MARK: the help examples

    @Test(arguments: CommandSpec.all.filter { $0.example != nil })
    func everyHelpExampleParsesAsItsOwnCommand(spec: CommandSpec) throws {
        let example = try #require(spec.example)
        let parsed = try CommandParser.parse(line: example)
        switch parsed {
        case .request(let command, _)?: #expect(command == spec.command)
        case .export?: #expect(spec.name == "export")
        case .webhooks?: #expect(spec.name == "webhooks")
        case .raw?: #expect(spec.name == "raw")
        case .help?: #expect(spec.name == "help")
        case .quit?, nil: Issue.record("\(example) parsed as \(String(describing: parsed))")
        }
    }
}
