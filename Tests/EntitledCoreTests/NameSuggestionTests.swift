import Testing

@testable import EntitledCore

/// The "did you mean" of the server's messages: request fields, configuration keys.
@Suite struct NameSuggestionTests {
    @Test func theEditDistanceCountsASwapAsOneEdit() {
        #expect(NameSuggestion.editDistance("entitlment", "entitlement") == 1)
        #expect(NameSuggestion.editDistance("usre", "user") == 1)
        #expect(NameSuggestion.editDistance("", "at") == 2)
        #expect(NameSuggestion.editDistance("at", "") == 2)
        #expect(NameSuggestion.editDistance("kitten", "sitting") == 3)
        #expect(NameSuggestion.editDistance("ID", "id") == 2)  // with case; `closest` compares without
    }

    @Test func theClosestNameWithinTheAllowedDistanceIsSuggestedWithoutCase() {
        let names = ["port", "host", "socket", "data-dir"]
        func closest(_ typed: String, within distance: Int = 2) -> String? {
            NameSuggestion.closest(to: typed, among: names, by: { $0 }) { _ in distance }
        }
        #expect(closest("prot") == "port")
        #expect(closest("PORT") == "port")
        #expect(closest("data_dir") == "data-dir")
        #expect(closest("sockets") == "socket")
        #expect(closest("xyzzy") == nil)
        #expect(closest("prot", within: 0) == nil)
        // Ties go to the first candidate: "pos" is two from both "port" and "host".
        #expect(closest("pos") == "port")
    }

    @Test func theAllowedDistanceCanGrowWithTheCandidatesLength() {
        let names = ["at", "expiresAt"]
        let quarter = { (length: Int) in max(1, min(3, length / 4)) }
        #expect(NameSuggestion.closest(to: "expires_at", among: names, by: { $0 }, within: quarter) == "expiresAt")
        #expect(NameSuggestion.closest(to: "an", among: names, by: { $0 }, within: quarter) == "at")
        #expect(NameSuggestion.closest(to: "xx", among: names, by: { $0 }, within: quarter) == nil)
    }

    @Test func aVeryLongNameGetsNoSuggestion() {
        let long = String(repeating: "p", count: NameSuggestion.longestName + 1)
        #expect(NameSuggestion.closest(to: long, among: [long], by: { $0 }) { _ in 100 } == nil)
        let fits = String(repeating: "p", count: NameSuggestion.longestName)
        #expect(NameSuggestion.closest(to: fits, among: [fits], by: { $0 }) { _ in 0 } == fits)
    }
}
