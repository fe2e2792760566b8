import Testing

@testable import EntitledConsole

/// `key=value` options are read once, by their kind, whichever command takes them: the same option
/// gives the same value and the same error in every command.
@Suite struct CommandOptionsTests {
    /// The options of `words` read as `command` reads them.
    private func options(_ command: ConsoleCommand, _ words: [String]) throws(ConsoleUsageError) -> CommandOptions {
        var arguments = ArgumentList(spec: command.spec, words: words, now: 0)
        return try arguments.takeOptions()
    }

    @Test func eachOptionIsReadByItsKind() throws {
        let options = try options(.grant, ["renews=YES", "source=stripe", "key=k 1"])
        #expect(options.flag(.renews) == true)
        #expect(options[.source] == "stripe")
        #expect(options[.key] == "k 1")
        #expect(options[.plan] == nil)
        #expect(try self.options(.grant, ["renews=false"]).flag(.renews) == false)
        #expect(try self.options(.history, ["limit=20"]).count(.limit) == 20)
        // A bare date is midnight UTC, as the request sends it.
        #expect(try self.options(.check, ["at=2027-01-01"])[.at] == "2027-01-01T00:00:00Z")
        #expect(try self.options(.event, ["grace=2027-01-01T10:00:00Z"])[.grace] == "2027-01-01T10:00:00Z")
    }

    @Test func theKeyIsMatchedWithoutRegardToCaseAndTheOtherWordsStay() throws {
        var arguments = ArgumentList(spec: ConsoleCommand.show.spec, words: ["user:u1", "LIMIT=5", "extra"], now: 0)
        #expect(try arguments.takeOptions().count(.limit) == 5)
        #expect(arguments.takeRest() == ["user:u1", "extra"])
    }

    @Test(arguments: [ConsoleCommand.show, .history])
    func anOptionGivesTheSameErrorInEveryCommandThatTakesIt(command: ConsoleCommand) {
        let spec = command.spec
        #expect(throws: ConsoleUsageError.badArguments(spec, reason: "limit= needs a whole number, not '-1'")) {
            try options(command, ["limit=-1"])
        }
        #expect(throws: ConsoleUsageError.badArguments(spec, reason: "after= is given twice")) {
            try options(command, ["after=a", "AFTER=b"])
        }
        #expect(throws: ConsoleUsageError.badArguments(spec, reason: "after= needs a value")) {
            try options(command, ["after="])
        }
    }

    @Test func anOptionTheCommandDoesNotTakeIsRefusedOnceTheOthersAreRead() {
        #expect(throws: ConsoleUsageError.unusedOption(ConsoleCommand.history.spec, option: "at")) {
            try options(.history, ["limit=5", "at=2027-01-01"])
        }
        #expect(throws: ConsoleUsageError.badArguments(ConsoleCommand.history.spec, reason: "limit= needs a value")) {
            try options(.history, ["at=2027-01-01", "limit="])
        }
    }

    @Test func optionsAreListedInTheOrderOfTheUsageLine() {
        #expect(ConsoleCommand.show.spec.options == ["at", "transaction", "original", "limit", "after"])
        #expect(ConsoleCommand.customer.spec.options.isEmpty)
    }
}
