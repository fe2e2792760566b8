import Testing

@testable import EntitledConsole

/// The "did you mean" list for a mistyped command name.
@Suite struct CommandSuggestionsTests {
    @Test func aTranspositionIsOneEditAway() {
        #expect(CommandSuggestions.editDistance("grnat", "grant") == 1)
        #expect(CommandSuggestions.editDistance("grant", "grant") == 0)
        #expect(CommandSuggestions.editDistance("", "ping") == 4)
        #expect(CommandSuggestions.editDistance("qit", "exit") == 2)
        #expect(CommandSuggestions.editDistance("kitten", "sitting") == 3)
    }

    @Test func aMistypedNameSuggestsTheCommandWithoutRegardToCase() {
        #expect(CommandSuggestions.closest(to: "grnat") == ["grant"])
        #expect(CommandSuggestions.closest(to: "GRNAT") == ["grant"])
        #expect(CommandSuggestions.closest(to: "chekc") == ["check"])
    }

    @Test func closerCommandsComeFirst() {
        #expect(CommandSuggestions.closest(to: "qit") == ["quit", "exit"])
        #expect(CommandSuggestions.closest(to: "shw") == ["show", "raw"])
    }

    @Test func equallyCloseCommandsComeInAlphabeticalOrderAtMostThree() {
        #expect(CommandSuggestions.closest(to: "rit") == ["exit", "quit", "raw"])
        #expect(CommandSuggestions.closest(to: "pit") == ["exit", "ping", "quit"])
    }

    @Test func aPrefixOfTwoLettersOrMoreCountsAsOneEditAway() {
        #expect(CommandSuggestions.closest(to: "sh") == ["show"])
        #expect(CommandSuggestions.closest(to: "snap") == ["snapshot"])
        #expect(CommandSuggestions.closest(to: "ca") == ["catalog", "raw"])
    }

    @Test func aSingleLetterOrAFarWordSuggestsNothing() {
        #expect(CommandSuggestions.closest(to: "s") == [])
        #expect(CommandSuggestions.closest(to: "xyzzy") == [])
        #expect(CommandSuggestions.closest(to: "") == [])
    }
}
