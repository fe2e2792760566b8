import EntitledClient
import Testing

@testable import EntitledConsole

/// `changes`: the request a line sends, the page's table, and the line under it that gives the command
/// for the next page (or, once up to date, for the changes still to come).
@Suite struct ChangesCommandTests {
    let renderer = ResponseRenderer(style: .plain, now: Instants.afterExamples)

    /// The text `changes` shows for `answer`, as the line `line` asked for it.
    func shown(_ line: String, _ answer: String) throws -> String {
        guard case .request(let command, let request)? = try CommandParser.parse(line: line) else {
            Issue.record("\(line) is not a request")
            return ""
        }
        return renderer.render(command: command, request: request, response: try response(answer))
    }

    // MARK: the request

    @Test func changesWithoutOptionsReadsFromTheOldestChangeTheFeedHolds() throws {
        #expect(try sentRequest("changes") == SentRequest(command: .changes, line: #"{"op":"changes","afterSeq":0}"#))
    }

    @Test func afterLimitAndASubjectGoToTheRequest() throws {
        #expect(
            try sentRequest("changes device:d1 after=120 user:u1 limit=20")?.line
                == #"{"op":"changes","afterSeq":120,"limit":20,"user":"u1","device":"d1"}"#
        )
        #expect(try sentRequest(words: ["changes", "AFTER=7"])?.line == #"{"op":"changes","afterSeq":7}"#)
    }

    @Test func afterIsAChangeNumberAndAnythingElseIsRefusedBeforeSending() throws {
        let usage = "\nusage: changes [SUBJECT [SUBJECT]] [after=SEQ] [limit=N]"
        #expect(
            usageError("changes after=mem_x")?.message
                == "after= of changes is a change number (a page's next, an export's seq), not 'mem_x'" + usage
        )
        #expect(usageError("changes after=-1") == .badArguments(try spec("changes"), reason: "after= of changes is a change number (a page's next, an export's seq), not '-1'"))
        #expect(usageError("changes all") == .badArguments(try spec("changes"), reason: "unexpected 'all'"))
        #expect(usageError("changes at=2027-01-01") == .unusedOption(try spec("changes"), option: "at"))
        #expect(usageError("changes limit=ten")?.message == "limit= needs a whole number, not 'ten'" + usage)
    }

    // MARK: the page

    @Test func aPageIsATableOfItsItemsOldestFirstAndAMoreLineWhileChangesFollow() throws {
        #expect(
            try shown("changes limit=6", FeedLines.page) == """
                SEQ  TIME                                       ACTOR    ACTION    SUBJECT                              MEMBERSHIP                                    PRODUCT  STATUS   REASON
                1    2026-11-22T11:00:00.000Z (1 hour ago)      local    define    -                                    entitlement:pro                               p1, p2   -        -
                2    2026-11-22T11:00:00.000Z (1 hour ago)      local    grant     user:u1                              mem_7v7p7yq5t1an7                             p1       active   welcome
                4    2026-11-22T11:00:02.000Z (59 minutes ago)  billing  transfer  user:u2 on device:d1 (from user:u9)  mem_1dk7eberyffy2                             p2       active   -
                5    2026-11-22T11:00:03.000Z (59 minutes ago)  local    revoke    user:u3                              mem_6c2z3shxqhpfc                             p1       revoked  refund
                6    2026-11-22T11:00:04.000Z (59 minutes ago)  local    erase     -                                    2 memberships, 3 history entries; 1 detached  -        -        -
                7    2026-11-22T11:00:05.000Z (59 minutes ago)  local    undefine  -                                    entitlement:pro                               p1, p2   -        -
                more: changes limit=6 after=7
                """
        )
    }

    @Test func theMoreLineKeepsTheSubjectAndTheLimitAndContinuesFromNext() throws {
        #expect(try shown("changes device:d1 user:u1 limit=6", FeedLines.page).hasSuffix("\nmore: changes user:u1 device:d1 limit=6 after=7"))
        // Following the more: line reads the page after it.
        let more = try #require(try shown("changes limit=6", FeedLines.page).split(separator: "\n").last).dropFirst("more: ".count)
        #expect(try sentRequest(String(more))?.line == #"{"op":"changes","afterSeq":7,"limit":6}"#)
    }

    @Test func aPageUpToDateGivesTheCommandForTheChangesStillToCome() throws {
        #expect(
            try shown("changes user:u1 after=7", FeedLines.lastPage) == """
                SEQ  TIME                                       ACTOR  ACTION  SUBJECT  MEMBERSHIP         PRODUCT  STATUS  REASON
                9    2026-11-22T11:00:06.000Z (59 minutes ago)  local  grant   user:u1  mem_7v7p7yq5t1an7  p1       active  -
                up to date at change 9; later changes: changes user:u1 after=9
                """
        )
        #expect(try shown("changes after=9", FeedLines.caughtUp) == "(no changes)\nup to date at change 9; later changes: changes after=9")
    }

    @Test func aPageOfOtherSubjectsChangesIsEmptyAndStillMovesOn() throws {
        let skipped = #"{"ok":true,"changes":[],"next":4000,"newest":9000,"oldestAfterSeq":0}"#
        #expect(try shown("changes user:u1", skipped) == "(no changes)\nmore: changes user:u1 after=4000")
    }

    @Test func anErrorAnswerIsLeftToTheSessionAndGetsNoLineUnderIt() throws {
        let truncated = try response(#"{"ok":false,"error":{"code":"truncated","message":"the change feed no longer holds every change after 0"}}"#)
        let request = EntitledRequest.changes(afterSeq: 0)
        #expect(renderer.feedFollowUp(request: request, response: truncated) == nil)
    }

    @Test func completionLearnsTheMembershipsAPageShows() throws {
        var knowledge = SessionKnowledge()
        knowledge.learn(from: try response(FeedLines.page))
        #expect(knowledge.membershipIDs == ["mem_7v7p7yq5t1an7", "mem_1dk7eberyffy2", "mem_6c2z3shxqhpfc"])
        #expect(knowledge.users == ["u1", "u2", "u3"])
        #expect(knowledge.entitlements == ["pro"])
    }

    @Test func tabOffersSubjectsAndTheTwoOptions() {
        var knowledge = SessionKnowledge()
        knowledge.users = ["u1"]
        #expect(Completer.candidates(forLine: "changes ", knowledge: knowledge).candidates == ["after=", "device:", "limit=", "user:", "user:u1"])
        #expect(Completer.candidates(forLine: "changes after=3 l", knowledge: knowledge).action == .replace(deleting: 1, insert: "limit="))
        #expect(Completer.candidates(forLine: "chan", knowledge: knowledge).action == .replace(deleting: 4, insert: "changes "))
    }
}
