import EntitledConsole
import Testing

/// The synopsis shown beside the line once a command with arguments has been typed.
@Suite struct ArgumentHintTests {
    @Test func aCompleteCommandNameFollowedByASpaceShowsItsArguments() {
        #expect(
            ArgumentHint.hint(forLine: "grant ")
                == "SUBJECT [SUBJECT] PRODUCT [DURATION | until TIME | lifetime] [source=SOURCE] [plan=PLAN] [OPTION=VALUE...]"
        )
        #expect(ArgumentHint.hint(forLine: "history ") == "SUBJECT [SUBJECT] | entitlement:NAME [limit=N] [after=CURSOR]")
        #expect(ArgumentHint.hint(forLine: "event mem_x ") == "MEMBERSHIP TYPE id=EVENT [at=TIME] [until TIME] [grace=TIME] [product=PRODUCT] [transaction=ID] [reason=TEXT]")
        #expect(ArgumentHint.hint(forLine: "revoke mem_x ref") == "MEMBERSHIP [REASON...]")
        #expect(ArgumentHint.hint(forLine: "extend ") == "MEMBERSHIP DURATION | TIME [REASON...]")
        #expect(ArgumentHint.hint(forLine: "EXTEND mem_x 1mo out") == "MEMBERSHIP DURATION | TIME [REASON...]")
        #expect(ArgumentHint.hint(forLine: "help ") == "[COMMAND]")
    }

    @Test func theCommandNameIsMatchedWithoutRegardToCaseAfterLeadingSpace() {
        #expect(ArgumentHint.hint(forLine: "  SHOW user:u1") == "SUBJECT [SUBJECT] [at=TIME] | transaction=ID | original=ID [limit=N] [after=ID]")
    }

    @Test func noHintWhileTheNameIsStillBeingTyped() {
        #expect(ArgumentHint.hint(forLine: "grant") == nil)
        #expect(ArgumentHint.hint(forLine: "  gr") == nil)
        #expect(ArgumentHint.hint(forLine: "") == nil)
    }

    @Test func noHintForAnUnknownCommandOrOneWithoutArguments() {
        #expect(ArgumentHint.hint(forLine: "grnat ") == nil)
        #expect(ArgumentHint.hint(forLine: "ping ") == nil)
        #expect(ArgumentHint.hint(forLine: "quit ") == nil)
    }
}
