import Testing

@testable import EntitledConsole

/// The one list of command names: each case has its spec and its parse function, and the specs, the
/// suggestions and `help` all come from it.
@Suite struct ConsoleCommandTests {
    @Test func everyCommandHasTheSpecThatNamesIt() {
        for command in ConsoleCommand.allCases {
            #expect(command.spec.command == command)
            #expect(command.spec.name == command.rawValue)
        }
        #expect(CommandSpec.all.map(\.command) == ConsoleCommand.allCases)
    }

    @Test func aCommandIsFoundWithoutRegardToCase() {
        #expect(ConsoleCommand(word: "GrAnT") == .grant)
        #expect(ConsoleCommand(word: "grants") == nil)
        #expect(ConsoleCommand(word: "") == nil)
    }

    /// Each command's parse function is its own, or one shared with commands that read the same words:
    /// a line of the command parses to a request named after that command.
    @Test(arguments: [
        ("check user:u1", "check"), ("grant user:u1 p", "grant"), ("claim device:d1 user:u1", "claim"), ("revoke mem_x", "revoke"), ("extend mem_x 1mo", "extend"),
        ("event mem_x cancellation id=e1", "event"), ("show user:u1", "show"), ("customer user:u1", "customer"),
        ("history user:u1", "history"), ("define pro p", "define"), ("undefine pro", "undefine"), ("erase user:u1", "erase"),
        ("catalog", "catalog"), ("watch all", "watch"), ("unwatch", "unwatch"), ("changes", "changes"), ("snapshot", "snapshot"), ("stats", "stats"),
        ("reload", "reload"), ("ping", "ping"), ("PING", "ping"),
    ])
    func eachCommandParsesToARequestOfItsOwnName(line: String, command: String) throws {
        #expect(try sentRequest(line)?.command == ConsoleCommand(word: command))
    }

    @Test func theConsolesOwnCommandsParseToWhatTheyDo() throws {
        #expect(try CommandParser.parse(line: "raw {}") == .raw("{}"))
        #expect(try CommandParser.parse(line: "help grant") == .help(topic: "grant"))
        #expect(try CommandParser.parse(line: "quit") == .quit)
        #expect(try CommandParser.parse(line: "exit") == .quit)
        #expect(try CommandParser.parse(line: "export") == .export(ExportPlan()))
    }

    @Test func everyOptionIsTakenBySomeCommand() {
        let taken = Set(CommandSpec.all.flatMap(\.acceptedOptions))
        #expect(taken == Set(ConsoleOption.allCases))
        #expect(OptionSuggestions.allKeys == Set(ConsoleOption.allCases.map(\.rawValue)))
    }
}
