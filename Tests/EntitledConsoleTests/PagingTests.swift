import EntitledClient
import EntitledConsole
import Testing

/// `show` and `history` a page at a time: `limit=N` and `after=CURSOR`, and the `more:` line under a page
/// whose answer carries `next`, which gives the command for the page after it.
@Suite struct PagingTests {
    let renderer = ResponseRenderer(style: .plain, now: Instants.afterExamples)

    /// `line` with `"next":next` added at the end of the answer object.
    func withNext(_ line: String, _ next: String) -> String {
        String(line.dropLast()) + #","next":"# + JSONValue.string(next).jsonText + "}"
    }

    /// The request a console line parses to.
    func parsedRequest(_ line: String) throws -> (command: ConsoleCommand, request: EntitledRequest) {
        guard case .request(let command, let request)? = try CommandParser.parse(line: line) else {
            Issue.record("\(line) is not a request")
            return (.ping, .ping)
        }
        return (command, request)
    }

    // MARK: the options

    @Test func showTakesALimitAndAnAfterWithEverySelection() throws {
        #expect(
            try sentRequest("show user:u1 limit=20 after=mem_1ymr6jcw5jqzv")
                == SentRequest(command: .show, line: #"{"op":"memberships","user":"u1","limit":20,"after":"mem_1ymr6jcw5jqzv"}"#)
        )
        #expect(
            try sentRequest("show after=mem_x device:d1 at=2027-01-01")?.line
                == #"{"op":"memberships","device":"d1","at":"2027-01-01T00:00:00Z","after":"mem_x"}"#
        )
        #expect(
            try sentRequest("show transaction=2000000456 limit=1")?.line == #"{"op":"memberships","transactionId":"2000000456","limit":1}"#
        )
        #expect(
            try sentRequest("show original=2000000123 AFTER=mem_x LIMIT=1000")?.line
                == #"{"op":"memberships","originalTransactionId":"2000000123","limit":1000,"after":"mem_x"}"#
        )
        // Without them the request is what it was: the server's default page.
        #expect(try sentRequest("show user:u1")?.line == #"{"op":"memberships","user":"u1"}"#)
    }

    @Test func historyTakesAnAfterBesideItsLimit() throws {
        #expect(
            try sentRequest("history user:u1 limit=2 after=1764000000000.3.mem_92dpedc461kg5.0")
                == SentRequest(command: .history, line: #"{"op":"history","user":"u1","limit":2,"after":"1764000000000.3.mem_92dpedc461kg5.0"}"#)
        )
        #expect(
            try sentRequest("history entitlement:pro after=1764000000000.1.-.4")?.line
                == #"{"op":"history","entitlement":"pro","after":"1764000000000.1.-.4"}"#
        )
    }

    @Test func theLimitsRangeAndTheCursorAreLeftToTheServer() throws {
        #expect(try sentRequest("show user:u1 limit=0")?.line == #"{"op":"memberships","user":"u1","limit":0}"#)
        #expect(try sentRequest("show user:u1 limit=5000")?.line == #"{"op":"memberships","user":"u1","limit":5000}"#)
        #expect(try sentRequest("show user:u1 after=whatever")?.line == #"{"op":"memberships","user":"u1","after":"whatever"}"#)
    }

    @Test func aBadLimitOrAfterIsRefusedBeforeSending() throws {
        let show = try spec("show")
        #expect(usageError("show user:u1 limit=ten") == .badArguments(show, reason: "limit= needs a whole number, not 'ten'"))
        #expect(usageError("show user:u1 after=") == .badArguments(show, reason: "after= needs a value"))
        #expect(usageError("show user:u1 after=mem_a after=mem_b") == .badArguments(show, reason: "after= is given twice"))
        #expect(usageError("history user:u1 after=a AFTER=b") == .badArguments(try spec("history"), reason: "after= is given twice"))
        #expect(usageError("show user:u1 aftr=mem_a") == .unknownOption(show, option: "aftr", suggestion: "after"))
        #expect(usageError("history user:u1 afer=x") == .unknownOption(try spec("history"), option: "afer", suggestion: "after"))
        // Commands whose answers are not pages do not take them.
        #expect(usageError("customer user:u1 after=mem_a") == .unusedOption(try spec("customer"), option: "after"))
        #expect(usageError("check user:u1 limit=3") == .unusedOption(try spec("check"), option: "limit"))
    }

    @Test func helpAndCompletionKnowTheOptions() throws {
        let show = HelpText.command(try spec("show"), style: .plain)
        #expect(show.hasPrefix("usage: show SUBJECT [SUBJECT] [at=TIME] | transaction=ID | original=ID [limit=N] [after=ID]\n"))
        #expect(show.contains("limit=N shows at most N memberships, from 1 to 1000; the server's default is 100."))
        #expect(show.contains("a more: line under the table gives the command for the next page"))
        #expect(HelpText.command(try spec("history"), style: .plain).contains("a more: line under the table gives the command for the next page"))

        let knowledge = SessionKnowledge()
        #expect(Completer.candidates(forLine: "show user:u1 af", knowledge: knowledge).action == .replace(deleting: 2, insert: "after="))
        #expect(Completer.candidates(forLine: "show user:u1 l", knowledge: knowledge).action == .replace(deleting: 1, insert: "limit="))
        #expect(Completer.candidates(forLine: "show transaction=t1 a", knowledge: knowledge).candidates == ["after=", "at="])
        #expect(Completer.candidates(forLine: "history user:u1 a", knowledge: knowledge).action == .replace(deleting: 1, insert: "after="))
        #expect(Completer.candidates(forLine: "history user:u1 after=x a", knowledge: knowledge).action == .none)
    }

    // MARK: the more: line

    @Test func aPageWithMoreAfterItEndsWithTheCommandForTheNextPage() throws {
        let (command, request) = try parsedRequest("show user:user_42")
        let text = renderer.render(command: command, request: request, response: try response(withNext(ProtocolLines.memberships, "mem_1ymr6jcw5jqzv")))
        let lines = text.split(separator: "\n")
        #expect(lines.count == 5, "\(text)")
        #expect(lines.first?.hasPrefix("ID                 PRODUCT") == true)
        #expect(lines.last == "more: show user:user_42 after=mem_1ymr6jcw5jqzv")
        // The table above it is the same as without the line.
        #expect(text.hasPrefix(renderer.render(command: command, response: try response(ProtocolLines.memberships)) + "\n"))
    }

    @Test func theLastPageHasNoMoreLine() throws {
        let (command, request) = try parsedRequest("show user:user_42 after=mem_x")
        let answer = try response(ProtocolLines.memberships)
        #expect(renderer.render(command: command, request: request, response: answer) == renderer.render(command: command, response: answer))
        #expect(renderer.morePages(command: command, request: request, response: answer) == nil)
        let empty = try response(ProtocolLines.noMemberships)
        #expect(renderer.render(command: command, request: request, response: empty) == "(no memberships)")
        let (history, historyRequest) = try parsedRequest("history user:user_7")
        #expect(!renderer.render(command: history, request: historyRequest, response: try response(ProtocolLines.history)).contains("more:"))
    }

    @Test func theMoreLineKeepsTheSelectionTheMomentAndTheLimit() throws {
        let next = "mem_1ymr6jcw5jqzv"
        let page = try response(withNext(ProtocolLines.memberships, next))
        let cases = [
            "show device:d1 user:u1 limit=3": "show user:u1 device:d1 limit=3 after=\(next)",
            "show user:u1 at=2027-01-01": "show user:u1 at=2027-01-01T00:00:00Z after=\(next)",
            "show transaction=2000000456 limit=1": "show transaction=2000000456 limit=1 after=\(next)",
            "show original=2000000123": "show original=2000000123 after=\(next)",
            // A later page names the page after it, not the one it came from.
            "show user:u1 after=mem_a limit=3": "show user:u1 limit=3 after=\(next)",
        ]
        for (typed, more) in cases {
            let (command, request) = try parsedRequest(typed)
            #expect(renderer.morePages(command: command, request: request, response: page) == "more: " + more, "\(typed)")
        }
    }

    @Test func historyPagesEndWithTheirMoreLineToo() throws {
        let cursor = "1764000000000.3.mem_92dpedc461kg5.0"
        let (command, request) = try parsedRequest("history user:user_7 limit=6")
        let text = renderer.render(command: command, request: request, response: try response(withNext(ProtocolLines.history, cursor)))
        #expect(text.split(separator: "\n").first?.hasPrefix("TIME") == true)
        #expect(text.hasSuffix("\nmore: history user:user_7 limit=6 after=\(cursor)"))
        let (catalog, catalogRequest) = try parsedRequest("history entitlement:pro")
        #expect(
            renderer.morePages(command: catalog, request: catalogRequest, response: try response(withNext(ProtocolLines.history, "1764000000000.1.-.4")))
                == "more: history entitlement:pro after=1764000000000.1.-.4"
        )
    }

    @Test func theMoreLineIsACommandThatAsksForTheNextPage() throws {
        // Typed back, the line's command is the same request with `after` the answer's `next`: ids with
        // spaces or quotes are quoted so that they come back whole.
        let next = "mem_1ymr6jcw5jqzv"
        let page = try response(withNext(ProtocolLines.memberships, next))
        for typed in [
            "show user:u1 device:d1 limit=7", "show user:u1 at=2027-01-01", "show transaction=t1", "show original=o1 limit=2",
            #"show user:"a b" device:'say "hi"'"#, #"history user:"back\\slash \"quoted\"" limit=5"#, #"history device:a\b"#, "history entitlement:pro after=1.2.-.3",
        ] {
            let (command, request) = try parsedRequest(typed)
            let more = try #require(renderer.morePages(command: command, request: request, response: page), "\(typed)")
            #expect(more.hasPrefix("more: "))
            let again = try parsedRequest(String(more.dropFirst("more: ".count)))
            #expect(again.command == command, "\(typed) -> \(more)")
            #expect(again.request == request.page(after: next), "\(typed) -> \(more)")
        }
    }

    @Test func theMoreLineIsColoredLikeTheConsolesOtherNotes() throws {
        let colored = ResponseRenderer(style: TextStyle(usesColor: true), now: Instants.afterExamples)
        let (command, request) = try parsedRequest("show user:user_42")
        #expect(
            colored.morePages(command: command, request: request, response: try response(withNext(ProtocolLines.memberships, "mem_x")))
                == "\u{1B}[33mmore: \u{1B}[0mshow user:user_42 after=mem_x"
        )
    }

    @Test func onlyPagesOfShowAndHistoryHaveAMoreLine() throws {
        let (command, request) = try parsedRequest("customer user:u1")
        let answer = try response(withNext(ProtocolLines.customer, "mem_x"))
        #expect(renderer.morePages(command: command, request: request, response: answer) == nil)
        let refused = try response(#"{"ok":false,"error":{"code":"over_limit","message":"user \"u1\" has 10001 memberships"},"next":"mem_x"}"#)
        let (show, showRequest) = try parsedRequest("show user:u1")
        #expect(renderer.morePages(command: show, request: showRequest, response: refused) == nil)
    }

    @Test func anOverLimitRefusalIsShownAsTheServerSaysIt() throws {
        let refused = try response(
            #"{"ok":false,"error":{"code":"over_limit","message":"user \"whale\" has 10001 memberships, more than the 10000 that customer goes through one by one"}}"#
        )
        let failure = try #require(refused.error)
        #expect(renderer.failure(failure) == #"(error) over_limit: user "whale" has 10001 memberships, more than the 10000 that customer goes through one by one"#)
    }

    // MARK: the previews of revoke and erase, which read one page

    @Test func eraseOfASubjectWithMoreThanAPageSaysSo() throws {
        let (command, erase) = try parsedRequest("erase user:user_42")
        #expect(command == .erase)
        let page = try response(withNext(ProtocolLines.memberships, "mem_1ymr6jcw5jqzv"))
        let text = ConfirmationPreview.text(.erase, request: erase, lookup: page, renderer: renderer)
        #expect(
            text.split(separator: "\n").first
                == "this erases user:user_42 for good: more than 3 memberships (the newest 3 below), its device links, idempotency keys and every history entry naming it"
        )
    }

    @Test func revokeOfAMembershipBeyondTheFirstPageSaysWhyItIsNotShown() throws {
        let (command, revoke) = try parsedRequest("revoke mem_0000000000000")
        #expect(command == .revoke)
        let page = try response(withNext(ProtocolLines.memberships, "mem_1ymr6jcw5jqzv"))
        #expect(
            ConfirmationPreview.text(.revoke, request: revoke, lookup: page, renderer: renderer)
                == "revoke mem_0000000000000: it is not among the newest 3 memberships of its owner, so it cannot be shown here"
        )
    }
}
