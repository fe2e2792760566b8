import EntitledConsole
import Testing

/// The commands that are not a typed request: raw, help, quit and exit, and lines with no command.
@Suite struct CommandParserLocalCommandTests {
    @Test func rawKeepsTheRestOfTheLineExactlyIncludingSpacingAndQuotes() throws {
        #expect(
            try CommandParser.parse(line: #"raw {"op":"check",   "user" : "u 1","product":"p"}"#)
                == .raw(#"{"op":"check",   "user" : "u 1","product":"p"}"#)
        )
    }

    @Test func rawDropsOnlyTheWhitespaceBetweenTheCommandAndTheLine() throws {
        #expect(try CommandParser.parse(line: "  raw \t  {\"op\":\"ping\"}  ") == .raw("{\"op\":\"ping\"}  "))
    }

    @Test func rawDoesNotApplyQuoteRulesSoAnUnbalancedQuoteIsSentAsTyped() throws {
        #expect(try CommandParser.parse(line: #"raw {"op":"ping"#) == .raw(#"{"op":"ping"#))
        #expect(try CommandParser.parse(line: #"raw 'x \"y"#) == .raw(#"'x \"y"#))
    }

    @Test func rawIsRecognizedWithoutRegardToCase() throws {
        #expect(try CommandParser.parse(line: #"RAW {"op":"ping"}"#) == .raw(#"{"op":"ping"}"#))
    }

    @Test func rawFromShellWordsJoinsThemWithOneSpace() throws {
        #expect(try CommandParser.parse(words: ["raw", #"{"op":"ping"}"#]) == .raw(#"{"op":"ping"}"#))
        #expect(try CommandParser.parse(words: ["raw", #"{"op":"ping","#, #""id":1}"#]) == .raw(#"{"op":"ping", "id":1}"#))
    }

    @Test func helpWithoutATopicListsTheCommands() throws {
        #expect(try CommandParser.parse(line: "help") == .help(topic: nil))
        #expect(try CommandParser.parse(line: "HELP") == .help(topic: nil))
    }

    @Test func helpKeepsItsTopicAsTyped() throws {
        #expect(try CommandParser.parse(line: "help grant") == .help(topic: "grant"))
        #expect(try CommandParser.parse(line: "help GRANT") == .help(topic: "GRANT"))
        // An unknown topic is the session's to report, with suggestions; the parser accepts it.
        #expect(try CommandParser.parse(line: "help grnat") == .help(topic: "grnat"))
    }

    @Test func quitAndExitLeaveInAnyCase() throws {
        for line in ["quit", "exit", "QUIT", "Exit", "  quit  "] {
            #expect(try CommandParser.parse(line: line) == .quit, "\(line)")
        }
        #expect(try CommandParser.parse(words: ["exit"]) == .quit)
    }

    @Test func aBlankLineOrNoWordsIsNoCommand() throws {
        #expect(try CommandParser.parse(line: "") == nil)
        #expect(try CommandParser.parse(line: " \t  ") == nil)
        #expect(try CommandParser.parse(words: []) == nil)
    }
}
