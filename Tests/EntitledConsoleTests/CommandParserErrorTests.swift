import EntitledConsole
import Testing

/// Lines the console refuses before sending anything, and the message each refusal shows.
@Suite struct CommandParserErrorTests {
    // MARK: unknown commands

    @Test func aTransposedCommandNameSuggestsTheCommand() {
        let error = usageError("grnat user:u1 prod_pro")
        #expect(error == .unknownCommand("grnat", suggestions: ["grant"]))
        #expect(error?.message == "unknown command 'grnat'; did you mean grant?")
        #expect(error?.code == "unknown_command")
    }

    @Test func twoSuggestionsAreJoinedWithOr() {
        #expect(usageError("qit")?.message == "unknown command 'qit'; did you mean quit or exit?")
    }

    @Test func threeSuggestionsAreListedWithCommasAndOr() {
        #expect(usageError("rit")?.message == "unknown command 'rit'; did you mean exit, quit or raw?")
    }

    @Test func aNameFarFromEveryCommandPointsToHelp() {
        let error = usageError("xyzzy")
        #expect(error == .unknownCommand("xyzzy", suggestions: []))
        #expect(error?.message == "unknown command 'xyzzy'; type help for the list of commands")
    }

    @Test func anUnknownCommandFromShellWordsKeepsTheTypedSpelling() {
        #expect(throws: ConsoleUsageError.unknownCommand("GRNAT", suggestions: ["grant"])) {
            try CommandParser.parse(words: ["GRNAT", "user:u1"])
        }
    }

    // MARK: quotes

    @Test func anUnterminatedQuoteIsRefused() {
        #expect(usageError(#"revoke mem_x "customer asked"#) == .unterminatedQuote)
        #expect(usageError("revoke mem_x 'customer asked") == .unterminatedQuote)
        #expect(ConsoleUsageError.unterminatedQuote.message == "a quote is not closed")
        #expect(ConsoleUsageError.unterminatedQuote.code == "unterminated_quote")
    }

    // MARK: bad arguments: the reason, then the usage line

    @Test func badArgumentsShowTheReasonThenTheUsageLine() throws {
        let error = usageError("grant user:u1")
        #expect(error == .badArguments(try spec("grant"), reason: "a PRODUCT is required"))
        #expect(
            error?.message
                == "a PRODUCT is required\nusage: grant SUBJECT [SUBJECT] PRODUCT [DURATION | until TIME | lifetime] [source=SOURCE] [plan=PLAN] [OPTION=VALUE...]"
        )
        #expect(error?.code == "bad_arguments")
    }

    @Test func aMissingSubjectIsRefusedByEveryCommandThatNeedsOne() {
        let reason = "a SUBJECT is required: user:ID, device:ID or both"
        #expect(usageError("check prod_pro")?.message == "\(reason)\nusage: check SUBJECT [SUBJECT] [PRODUCT | entitlement:NAME] [at=TIME]")
        #expect(
            usageError("show")?.message
                == "a SUBJECT (user:ID, device:ID or both), transaction=ID or original=ID is required\nusage: show SUBJECT [SUBJECT] [at=TIME] | transaction=ID | original=ID [limit=N] [after=ID]"
        )
        #expect(usageError("grant prod_pro 30d")?.message.hasPrefix(reason + "\n") == true)
        #expect(usageError("claim")?.message == "\(reason)\nusage: claim device:ID user:ID [reason=TEXT]")
        #expect(usageError("customer")?.message == "\(reason)\nusage: customer SUBJECT [SUBJECT]")
    }

    @Test func aSubjectGivenTwiceIsRefused() throws {
        #expect(usageError("check user:u1 user:u2") == .badArguments(try spec("check"), reason: "user: is given twice"))
        #expect(usageError("grant device:a DEVICE:b prod_pro") == .badArguments(try spec("grant"), reason: "device: is given twice"))
    }

    @Test func aSubjectWithoutANameIsRefused() throws {
        #expect(usageError("show user:") == .badArguments(try spec("show"), reason: "user:ID needs a name after the colon"))
        #expect(usageError("check device: prod") == .badArguments(try spec("check"), reason: "device:ID needs a name after the colon"))
        #expect(
            usageError("check user:u1 entitlement:")
                == .badArguments(try spec("check"), reason: "entitlement:NAME needs a name after the colon")
        )
    }

    @Test func anOptionTheCommandDoesNotHaveIsRefused() throws {
        #expect(usageError("check user:u1 foo=bar") == .unknownOption(try spec("check"), option: "foo", suggestion: nil))
        #expect(usageError("grant user:u1 prod_pro foo=bar") == .unknownOption(try spec("grant"), option: "foo", suggestion: nil))
        #expect(usageError("show user:u1 source=stripe") == .unusedOption(try spec("show"), option: "source"))
        #expect(
            usageError("show user:u1 transaction=1000")
                == .badArguments(try spec("show"), reason: "give one of a SUBJECT, transaction=ID and original=ID")
        )
        #expect(
            usageError("show transaction=1000 at=2027-01-01")
                == .badArguments(try spec("show"), reason: "at=TIME goes with a SUBJECT, not with transaction=ID or original=ID")
        )
        #expect(usageError("claim device:d1 user:u1 foo=bar") == .unknownOption(try spec("claim"), option: "foo", suggestion: nil))
    }

    @Test func anOptionGivenTwiceOrWithoutAValueIsRefused() throws {
        #expect(usageError("grant user:u1 p source=stripe SOURCE=whop") == .badArguments(try spec("grant"), reason: "source= is given twice"))
        #expect(usageError("check user:u1 at=2027-01-01 at=2028-01-01") == .badArguments(try spec("check"), reason: "at= is given twice"))
        #expect(usageError("grant user:u1 p plan=") == .badArguments(try spec("grant"), reason: "plan= needs a value"))
    }

    @Test func extraWordsAreRefused() throws {
        #expect(usageError("check user:u1 prod_a prod_b") == .badArguments(try spec("check"), reason: "unexpected 'prod_b'"))
        #expect(usageError("grant user:u1 prod_pro 30d extra") == .badArguments(try spec("grant"), reason: "unexpected 'extra'"))
        #expect(usageError("grant user:u1 prod_pro until 2027-01-01 30d") == .badArguments(try spec("grant"), reason: "unexpected '30d'"))
        #expect(usageError("claim device:d1 user:u1 now") == .badArguments(try spec("claim"), reason: "unexpected 'now'"))
        #expect(usageError("show user:u1 prod_pro") == .badArguments(try spec("show"), reason: "unexpected 'prod_pro'"))
        #expect(usageError("catalog all") == .badArguments(try spec("catalog"), reason: "unexpected 'all'"))
        #expect(usageError("snapshot now") == .badArguments(try spec("snapshot"), reason: "unexpected 'now'"))
        #expect(usageError("ping twice")?.message == "unexpected 'twice'\nusage: ping")
        #expect(usageError("quit now")?.message == "unexpected 'now'\nusage: quit")
        #expect(usageError("exit 1")?.message == "unexpected '1'\nusage: exit")
    }

    @Test func aWordThatIsNotADurationIsRefused() throws {
        for word in ["forever", "30D", "1.5h", "d", "30", "-1d", "1month", "1mins"] {
            #expect(
                usageError("grant user:u1 prod_pro \(word)")
                    == .badArguments(try spec("grant"), reason: "'\(word)' is not a duration (30d, 12h, 2w, 1mo, 1y), until TIME or lifetime"),
                "\(word)"
            )
        }
    }

    @Test func aDurationInMIsRefusedNamingMinutesAndMonths() throws {
        #expect(
            usageError("grant user:u1 prod_pro 1m")
                == .badArguments(try spec("grant"), reason: "'1m' is ambiguous: 1min for minutes, 1mo for calendar months")
        )
    }

    @Test func untilWithoutATimeIsRefused() throws {
        #expect(
            usageError("grant user:u1 prod_pro until")
                == .badArguments(try spec("grant"), reason: "until needs a TIME, such as until 2027-01-01")
        )
    }

    @Test func grantWithOnlyOptionsHasNoProduct() throws {
        #expect(usageError("grant user:u1 source=stripe") == .badArguments(try spec("grant"), reason: "a PRODUCT is required"))
    }

    @Test func claimNeedsBothADeviceAndAUser() throws {
        let expected = ConsoleUsageError.badArguments(try spec("claim"), reason: "claim needs both device:ID and user:ID")
        #expect(usageError("claim user:u1") == expected)
        #expect(usageError("claim device:d1") == expected)
    }

    @Test func revokeAndDefineNeedTheirFirstWord() throws {
        #expect(usageError("revoke")?.message == "a MEMBERSHIP id is required (show lists them)\nusage: revoke MEMBERSHIP [REASON...]")
        #expect(usageError("define")?.message == "an ENTITLEMENT name is required\nusage: define ENTITLEMENT PRODUCT... [reason=TEXT]")
        #expect(usageError("define reason=x") == .badArguments(try spec("define"), reason: "an ENTITLEMENT name is required"))
    }

    @Test func extendNeedsAMembershipThenADurationOrATime() throws {
        #expect(
            usageError("extend")?.message
                == "a MEMBERSHIP id is required (show lists them)\nusage: extend MEMBERSHIP DURATION | TIME [REASON...]"
        )
        #expect(
            usageError("extend mem_x")?.message == """
                a DURATION (such as 1mo) or a TIME (such as 2027-01-01) is required: how much later, or the new expiry
                usage: extend MEMBERSHIP DURATION | TIME [REASON...]
                """
        )
        #expect(
            usageError("extend mem_x reason=outage")
                == .badArguments(
                    try spec("extend"),
                    reason: "a DURATION (such as 1mo) or a TIME (such as 2027-01-01) is required: how much later, or the new expiry"
                )
        )
    }

    @Test func extendRefusesAWordThatIsNeitherADurationNorATime() throws {
        for word in ["outage", "forever", "lifetime", "30D", "1.5h", "30", "-1d", "1month", "m", "2027-1-1", "2027-01-01X"] {
            #expect(
                usageError("extend mem_x \(word) reason=outage")
                    == .badArguments(
                        try spec("extend"), reason: "'\(word)' is not a DURATION (7d, 12h, 2w, 1mo, 1y) or a TIME (2027-01-01, 2027-01-01T09:00:00Z)"
                    ),
                "\(word)"
            )
        }
    }

    @Test func extendByADurationInMIsRefusedNamingMinutesAndMonthsAsGrantDoes() throws {
        #expect(
            usageError("extend mem_x 1m")
                == .badArguments(try spec("extend"), reason: "'1m' is ambiguous: 1min for minutes, 1mo for calendar months")
        )
        #expect(usageError("extend mem_x 90m")?.message.hasPrefix("'90m' is ambiguous: 90min for minutes, 90mo for calendar months\n") == true)
    }

    @Test func extendUntilWithoutATimeIsRefused() throws {
        #expect(usageError("extend mem_x until") == .badArguments(try spec("extend"), reason: "until needs a TIME, such as until 2027-01-01"))
    }

    @Test func defineRefusesAnOptionItDoesNotHave() throws {
        #expect(usageError("define pro p1 reson=launch") == .unknownOption(try spec("define"), option: "reson", suggestion: "reason"))
    }

    // MARK: the lifecycle commands

    @Test func grantLifecycleOptionsAreCheckedForShape() throws {
        let grant = try spec("grant")
        #expect(usageError("grant user:u1 p renews=maybe") == .badArguments(grant, reason: "renews= needs yes or no, not 'maybe'"))
        #expect(usageError("grant user:u1 p period=trial PERIOD=intro") == .badArguments(grant, reason: "period= is given twice"))
        #expect(usageError("grant user:u1 p key=") == .badArguments(grant, reason: "key= needs a value"))
        #expect(
            usageError("grant user:u1 p original=tx_1")
                == .badArguments(grant, reason: "original= needs transaction=: the original transaction of which transaction")
        )
        #expect(usageError("grant user:u1 p environment=sandbox") == .unknownOption(grant, option: "environment", suggestion: "env"))
    }

    @Test func eventNeedsAMembershipATypeAndAnId() throws {
        let event = try spec("event")
        #expect(usageError("event") == .badArguments(event, reason: "a MEMBERSHIP id is required (show lists them)"))
        #expect(
            usageError("event mem_x id=e1")
                == .badArguments(
                    event,
                    reason: "an event TYPE is required: renewal, cancellation, uncancellation, billing_issue, billing_recovered, expiration, pause, resume, product_change, refund, extension, refund_reversal"
                )
        )
        #expect(
            usageError("event mem_x refund")?.message == """
                id=EVENT is required: the store's id of the event, so that a repeated one is ignored
                usage: event MEMBERSHIP TYPE id=EVENT [at=TIME] [until TIME] [grace=TIME] [product=PRODUCT] [transaction=ID] [reason=TEXT]
                """
        )
    }

    @Test func eventRefusesStrayWordsAndUnknownOptions() throws {
        let event = try spec("event")
        #expect(usageError("event mem_x renewal id=e until") == .badArguments(event, reason: "until needs a TIME, such as until 2027-01-01"))
        #expect(usageError("event mem_x renewal id=e 2027-01-01") == .badArguments(event, reason: "unexpected '2027-01-01'"))
        #expect(usageError("event mem_x renewal id=e until 2027-01-01 now") == .badArguments(event, reason: "unexpected 'now'"))
        #expect(usageError("event mem_x renewal id=e expires=2027-01-01") == .unknownOption(event, option: "expires", suggestion: nil))
    }

    @Test func historyNeedsASubjectOrAnEntitlementButNotBoth() throws {
        let history = try spec("history")
        #expect(
            usageError("history")?.message == """
                a SUBJECT (user:ID, device:ID or both) or entitlement:NAME is required
                usage: history SUBJECT [SUBJECT] | entitlement:NAME [limit=N] [after=CURSOR]
                """
        )
        #expect(usageError("history user:u1 entitlement:pro") == .badArguments(history, reason: "give a SUBJECT or entitlement:NAME, not both"))
        #expect(usageError("history entitlement:") == .badArguments(history, reason: "entitlement:NAME needs a name after the colon"))
        #expect(usageError("history entitlement:a entitlement:b") == .badArguments(history, reason: "entitlement: is given twice"))
        #expect(usageError("history user:u1 extra") == .badArguments(history, reason: "unexpected 'extra'"))
    }

    @Test func historyLimitMustBeAWholeNumber() throws {
        let history = try spec("history")
        for text in ["ten", "-1", "2.5", "99999999999999999999"] {
            #expect(usageError("history user:u1 limit=\(text)") == .badArguments(history, reason: "limit= needs a whole number, not '\(text)'"), "\(text)")
        }
    }

    @Test func watchNeedsASubjectOrAllAndUnwatchNotBoth() throws {
        #expect(usageError("watch") == .badArguments(try spec("watch"), reason: "a SUBJECT (user:ID, device:ID or both) or all is required"))
        #expect(usageError("watch user:u1 all") == .badArguments(try spec("watch"), reason: "give a SUBJECT or all, not both"))
        #expect(usageError("unwatch all device:d1") == .badArguments(try spec("unwatch"), reason: "give a SUBJECT or all, not both"))
        #expect(usageError("watch everyone") == .badArguments(try spec("watch"), reason: "unexpected 'everyone'"))
    }

    @Test func rawWithoutALineIsRefused() {
        #expect(usageError("raw")?.message == "raw needs a JSON request line\nusage: raw JSON")
        #expect(usageError("raw   \t ")?.message == "raw needs a JSON request line\nusage: raw JSON")
    }

    @Test func helpTakesAtMostOneTopic() {
        #expect(usageError("help grant check")?.message == "help takes at most one command name\nusage: help [COMMAND]")
    }
}
