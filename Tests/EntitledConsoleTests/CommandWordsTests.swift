import EntitledConsole
import Testing

/// How a console line is cut into words: whitespace separates, quotes keep spaces, and a line still being
/// typed gives its finished words and the word under the cursor.
@Suite struct CommandWordsTests {
    @Test func runsOfSpacesAndTabsSeparateWords() throws {
        #expect(try CommandWords.split("  grant\tuser:u1    prod_pro  ") == ["grant", "user:u1", "prod_pro"])
    }

    @Test func aBlankLineHasNoWords() throws {
        #expect(try CommandWords.split("") == [])
        #expect(try CommandWords.split(" \t ") == [])
    }

    @Test func doubleAndSingleQuotesKeepSpacesInsideOneWord() throws {
        #expect(try CommandWords.split(#"revoke mem_x "customer asked""#) == ["revoke", "mem_x", "customer asked"])
        #expect(try CommandWords.split("revoke mem_x 'customer  asked'") == ["revoke", "mem_x", "customer  asked"])
    }

    @Test func quotedPartsJoinTheTextAroundThem() throws {
        #expect(try CommandWords.split(#"user:"a b"c 'd'e"#) == ["user:a bc", "de"])
    }

    @Test func anEmptyQuotedStringIsAnEmptyWord() throws {
        #expect(try CommandWords.split(#"a "" b"#) == ["a", "", "b"])
    }

    @Test func aBackslashInDoubleQuotesEscapesTheNextCharacter() throws {
        #expect(try CommandWords.split(#""say \"hi\" \\ now""#) == [#"say "hi" \ now"#])
    }

    @Test func aBackslashInSingleQuotesOrOutsideQuotesIsAnOrdinaryCharacter() throws {
        #expect(try CommandWords.split(#"'a\b' c\ d"#) == [#"a\b"#, #"c\"#, "d"])
    }

    @Test func theOtherKindOfQuoteIsOrdinaryInsideQuotes() throws {
        #expect(try CommandWords.split(#""it's" 'say "x"'"#) == ["it's", #"say "x""#])
    }

    @Test func anUnclosedQuoteIsAnError() {
        #expect(throws: ConsoleUsageError.unterminatedQuote) { try CommandWords.split(#"revoke "abc"#) }
        #expect(throws: ConsoleUsageError.unterminatedQuote) { try CommandWords.split("'") }
        // The escaped quote does not close the string.
        #expect(throws: ConsoleUsageError.unterminatedQuote) { try CommandWords.split(#""abc\""#) }
    }

    // MARK: splitForCompletion

    @Test func completionSplitGivesTheFinishedWordsAndThePartialOne() {
        let split = CommandWords.splitForCompletion("grant user:u1 pr")
        #expect(split.finished == ["grant", "user:u1"])
        #expect(split.current == "pr")
    }

    @Test func aLineEndingInWhitespaceHasAnEmptyCurrentWord() {
        let split = CommandWords.splitForCompletion("grant user:u1 ")
        #expect(split.finished == ["grant", "user:u1"])
        #expect(split.current == "")
    }

    @Test func anEmptyLineHasNoWordsAndAnEmptyCurrentWord() {
        let split = CommandWords.splitForCompletion("")
        #expect(split.finished == [])
        #expect(split.current == "")
    }

    @Test func theFirstWordBeingTypedIsTheCurrentWord() {
        let split = CommandWords.splitForCompletion("  gr")
        #expect(split.finished == [])
        #expect(split.current == "gr")
    }

    @Test func anOpenQuoteIsAcceptedAndItsTextIsTheCurrentWord() {
        let split = CommandWords.splitForCompletion(#"revoke mem_x "customer as"#)
        #expect(split.finished == ["revoke", "mem_x"])
        #expect(split.current == "customer as")
    }

    @Test func aClosedQuotedWordFollowedBySpaceIsFinished() {
        let split = CommandWords.splitForCompletion(#"revoke mem_x "customer asked" "#)
        #expect(split.finished == ["revoke", "mem_x", "customer asked"])
        #expect(split.current == "")
    }
}
