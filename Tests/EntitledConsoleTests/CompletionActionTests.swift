import Testing

@testable import EntitledConsole

/// What pressing Tab does with a set of candidates: ring the bell, replace the typed part, or list them.
@Suite struct CompletionActionTests {
    @Test func noCandidateDoesNothing() {
        #expect(Completion(partial: "x", candidates: []).action == .none)
    }

    @Test func aSingleWordReplacesTheTypedPartAndAddsASpace() {
        #expect(Completion(partial: "gr", candidates: ["grant"]).action == .replace(deleting: 2, insert: "grant "))
    }

    @Test func aSingleWordEndingInColonOrEqualsGetsNoSpace() {
        #expect(Completion(partial: "u", candidates: ["user:"]).action == .replace(deleting: 1, insert: "user:"))
        #expect(Completion(partial: "so", candidates: ["source="]).action == .replace(deleting: 2, insert: "source="))
    }

    @Test func severalWordsWithALongerCommonPrefixInsertThePrefixWithoutASpace() {
        #expect(
            Completion(partial: "p", candidates: ["prod_a1", "prod_a2", "prod_ab"]).action
                == .replace(deleting: 1, insert: "prod_a")
        )
    }

    @Test func severalWordsWithNothingMoreInCommonAreListed() {
        #expect(Completion(partial: "pro", candidates: ["prod", "prof"]).action == .list(["prod", "prof"]))
        #expect(Completion(partial: "", candidates: ["a", "b"]).action == .list(["a", "b"]))
    }

    @Test func theReplacementDeletesTheTypedPartCountedInCharacters() {
        #expect(Completion(partial: "é", candidates: ["éclair"]).action == .replace(deleting: 1, insert: "éclair "))
    }
}
