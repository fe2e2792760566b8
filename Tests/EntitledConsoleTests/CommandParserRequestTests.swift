import EntitledClient
import EntitledConsole
import Testing

/// The protocol request each console command sends, compared as the exact line that goes on the wire.
@Suite struct CommandParserRequestTests {
    // MARK: check

    @Test func checkWithAUserAndAnEntitlementAsksAboutTheEntitlement() throws {
        #expect(
            try sentRequest("check user:u1 entitlement:pro")
                == SentRequest(command: "check", line: #"{"op":"check","user":"u1","entitlement":"pro"}"#)
        )
    }

    @Test func checkWritesSubjectProductAndTimeInProtocolOrderWhateverTheTypedOrder() throws {
        #expect(
            try sentRequest("check at=2027-01-01T10:00:00Z prod_pro device:d1 user:u1")
                == SentRequest(
                    command: "check",
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
                    command: "grant",
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
        for duration in ["45s", "90m", "12h", "30d", "2w"] {
            #expect(
                try sentRequest("grant device:d1 p \(duration)")?.line
                    == #"{"op":"grant","device":"d1","product":"p","duration":"\#(duration)"}"#
            )
        }
    }

    // MARK: claim

    @Test func claimSendsDeviceThenUserWhateverTheTypedOrder() throws {
        let expected = SentRequest(command: "claim", line: #"{"op":"claim","device":"d1","user":"u1"}"#)
        #expect(try sentRequest("claim device:d1 user:u1") == expected)
        #expect(try sentRequest("claim user:u1 device:d1") == expected)
    }

    // MARK: revoke

    @Test func revokeWithoutAReasonLeavesTheReasonToTheServer() throws {
        #expect(
            try sentRequest("revoke mem_1ymr6jcw5jqzv")
                == SentRequest(command: "revoke", line: #"{"op":"revoke","membership":"mem_1ymr6jcw5jqzv"}"#)
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

    // MARK: show

    @Test func showAsksForTheMembershipsOperation() throws {
        #expect(
            try sentRequest("show user:u1 device:d1")
                == SentRequest(command: "show", line: #"{"op":"memberships","user":"u1","device":"d1"}"#)
        )
    }

    @Test func showAtABareDateMeansMidnightUTC() throws {
        #expect(
            try sentRequest("show device:d1 at=2027-01-01")?.line
                == #"{"op":"memberships","device":"d1","at":"2027-01-01T00:00:00Z"}"#
        )
    }

    // MARK: define

    @Test func defineSendsTheProductsAsAnArrayInTheTypedOrder() throws {
        #expect(
            try sentRequest("define pro prod_pro_y prod_pro_m")
                == SentRequest(command: "define", line: #"{"op":"define","entitlement":"pro","products":["prod_pro_y","prod_pro_m"]}"#)
        )
    }

    @Test func defineWithoutProductsSendsAnEmptyArray() throws {
        #expect(try sentRequest("define beta")?.line == #"{"op":"define","entitlement":"beta","products":[]}"#)
    }

    // MARK: commands without arguments

    @Test func catalogSnapshotAndPingSendTheirOperationAlone() throws {
        #expect(try sentRequest("catalog") == SentRequest(command: "catalog", line: #"{"op":"catalog"}"#))
        #expect(try sentRequest("snapshot") == SentRequest(command: "snapshot", line: #"{"op":"snapshot"}"#))
        #expect(try sentRequest("ping") == SentRequest(command: "ping", line: #"{"op":"ping"}"#))
    }

    @Test func commandNamesAreCaseInsensitiveAndTheCommandIsReportedInLowerCase() throws {
        #expect(try sentRequest("PING") == SentRequest(command: "ping", line: #"{"op":"ping"}"#))
        #expect(
            try sentRequest("GrAnT device:d1 prod_pro 7d")
                == SentRequest(command: "grant", line: #"{"op":"grant","device":"d1","product":"prod_pro","duration":"7d"}"#)
        )
        #expect(try sentRequest("SHOW user:u1")?.command == "show")
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
            try sentRequest(words: ["define", #"it"s"#])?.line == #"{"op":"define","entitlement":"it\"s","products":[]}"#
        )
    }

    // MARK: the help examples

    @Test(arguments: CommandSpec.all.filter { $0.example != nil })
    func everyHelpExampleParsesAsItsOwnCommand(spec: CommandSpec) throws {
        let example = try #require(spec.example)
        let parsed = try CommandParser.parse(line: example)
        switch parsed {
        case .request(let command, _)?: #expect(command == spec.name)
        case .raw?: #expect(spec.name == "raw")
        case .help?: #expect(spec.name == "help")
        case .quit?, nil: Issue.record("\(example) parsed as \(String(describing: parsed))")
        }
    }
}
