import EntitledConsole
import Testing

/// A `key=value` word a command does not take is refused before anything is sent, with the option meant
/// when one is close: a misspelt option must never change what a command does.
@Suite struct CommandParserOptionTests {
    @Test func aMisspeltOptionIsRefusedNamingTheClosestOptionOfTheCommand() throws {
        let error = try #require(usageError("grant user:bob prod_pro 30d sorce=stripe"))
        #expect(error == .unknownOption(try spec("grant"), option: "sorce", suggestion: "source"))
        #expect(error.message == #"unknown option "sorce=" for grant (did you mean "source="?)"#)
        #expect(error.code == "unknown_option")
    }

    @Test func eachCommandSuggestsFromItsOwnOptions() throws {
        #expect(usageError("history user:u1 limt=5") == .unknownOption(try spec("history"), option: "limt", suggestion: "limit"))
        #expect(usageError("revoke mem_x reasn=fraud") == .unknownOption(try spec("revoke"), option: "reasn", suggestion: "reason"))
        #expect(usageError("event mem_x renewal id=e1 until 2027-01-01 trasaction=t1")
            == .unknownOption(try spec("event"), option: "trasaction", suggestion: "transaction"))
        #expect(usageError("check user:u1 prod_pro ta=2027-01-01") == .unknownOption(try spec("check"), option: "ta", suggestion: "at"))
        #expect(usageError("erase user:u1 resaon=gdpr") == .unknownOption(try spec("erase"), option: "resaon", suggestion: "reason"))
        #expect(usageError("extend mem_x 1mo raeson=outage") == .unknownOption(try spec("extend"), option: "raeson", suggestion: "reason"))
    }

    @Test func anUnknownOptionWithNothingCloseListsTheCommandsOptions() throws {
        let error = try #require(usageError("show user:u1 colour=red"))
        #expect(error.message == #"unknown option "colour=" for show; its options are at=, transaction=, original=, limit=, after="#)
    }

    @Test func anOptionOfAnotherCommandIsRefusedAsUnused() throws {
        let check = try #require(usageError("check user:bob prod_pro source=stripe"))
        #expect(check == .unusedOption(try spec("check"), option: "source"))
        #expect(check.message == #"check does not use "source="; its options are at="#)
        #expect(usageError("customer user:u1 at=2027-01-01")?.message == #"customer does not use "at="; it takes no options"#)
        #expect(usageError("grant user:u1 prod_pro limit=3") == .unusedOption(try spec("grant"), option: "limit"))
    }

    @Test func anOptionIsRefusedWhereverItIsTyped() throws {
        #expect(usageError("grant sorce=stripe user:bob prod_pro") == .unknownOption(try spec("grant"), option: "sorce", suggestion: "source"))
        // Checked before the stray word: the option is the likelier mistake, and the one that would change meaning.
        #expect(usageError("show user:u1 extra sorce=x") == .unknownOption(try spec("show"), option: "sorce", suggestion: nil))
    }

    @Test func revokeTakesItsReasonAsWordsOrAsAnOptionButNotBoth() throws {
        #expect(try sentRequest("revoke mem_x reason=fraud")?.line == #"{"op":"revoke","membership":"mem_x","reason":"fraud"}"#)
        #expect(try sentRequest("revoke mem_x charge back")?.line == #"{"op":"revoke","membership":"mem_x","reason":"charge back"}"#)
        #expect(
            usageError("revoke mem_x refund reason=fraud")
                == .badArguments(try spec("revoke"), reason: "give the REASON as words or as reason=TEXT, not both")
        )
    }

    @Test func extendTakesItsReasonAsWordsOrAsAnOptionButNotBoth() throws {
        #expect(
            try sentRequest("extend mem_x 1mo reason=outage")?.line == #"{"op":"extend","membership":"mem_x","duration":"1mo","reason":"outage"}"#
        )
        #expect(
            try sentRequest("extend reason=outage mem_x 2027-01-01")?.line
                == #"{"op":"extend","membership":"mem_x","expiresAt":"2027-01-01T00:00:00Z","reason":"outage"}"#
        )
        #expect(
            usageError("extend mem_x 1mo outage reason=outage")
                == .badArguments(try spec("extend"), reason: "give the REASON as words or as reason=TEXT, not both")
        )
        #expect(usageError("extend mem_x 1mo source=manual") == .unusedOption(try spec("extend"), option: "source"))
    }

    @Test func everyOptionACommandListsIsAccepted() throws {
        let values = ["renews": "yes", "limit": "5", "at": "2027-01-01", "grace": "2027-01-01"]
        let lines = [
            "check": "check user:u1", "grant": "grant user:u1 prod_x", "claim": "claim device:d1 user:u1",
            "revoke": "revoke mem_x", "extend": "extend mem_x 1mo", "event": "event mem_x billing_issue", "show": "show user:u1",
            "history": "history user:u1", "define": "define pro prod_x", "undefine": "undefine pro", "erase": "erase user:u1",
            "changes": "changes", "export": "export",
        ]
        for spec in CommandSpec.all where !spec.options.isEmpty {
            let base = try #require(lines[spec.name], "no line for \(spec.name)")
            for option in spec.options {
                var line = (spec.name == "event" && option == "product" ? "event mem_x product_change" : base) + " \(option)=\(values[option] ?? "x")"
                if spec.name == "event" && option != "id" { line += " id=e1" }
                if spec.name == "grant" && option == "original" { line += " transaction=t1" }
                if spec.name == "show" && ["transaction", "original"].contains(option) { line = "show \(option)=x" }  // instead of a subject
                if spec.name == "changes" && option == "after" { line = "changes after=5" }  // a change number
                #expect(usageError(line) == nil, "\(line) was refused: \(String(describing: usageError(line)))")
            }
        }
    }
}
