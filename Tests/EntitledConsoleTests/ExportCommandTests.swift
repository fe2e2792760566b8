import EntitledClient
import Testing

@testable import EntitledConsole

/// `export`: the words it takes, the requests it sends page after page, the lines it writes and when it
/// stops, read against answers given here instead of a server.
@Suite struct ExportCommandTests {
    /// Lines kept in memory, as a file would get them.
    final class Lines: ExportSink {
        var written: [String] = []
        var finished = false
        func write(_ lines: [String]) throws(ExportFailure) { written += lines }
        func finish() throws(ExportFailure) { finished = true }
        func discard() { written = [] }
    }

    /// A server that answers each request with the next of `answers` and remembers what it was sent.
    final class Answers {
        var answers: [String]
        var sent: [String] = []
        init(_ answers: [String]) { self.answers = answers }

        func send(_ request: EntitledRequest) throws(EntitledClientError) -> EntitledResponse {
            sent.append(request.jsonLine)
            guard !answers.isEmpty else { throw .connectionClosed(address: .tcp(host: "127.0.0.1", port: 7117)) }
            return try EntitledResponse(line: answers.removeFirst())
        }
    }

    func plan(_ line: String) throws -> ExportPlan? {
        guard case .export(let plan)? = try CommandParser.parse(line: line) else { return nil }
        return plan
    }

    /// Runs an export of `plan` against `answers`; the failure, if it stopped.
    func run(_ plan: ExportPlan, _ answers: Answers, into sink: Lines) -> (summary: ExportSummary?, failure: ExportFailure?) {
        var reader = ExportReader(plan: plan)
        do {
            return (try reader.run(send: answers.send, into: sink), nil)
        } catch {
            return (reader.summary, error)
        }
    }

    // MARK: the words

    @Test func historyToFileAndLimitAreTakenInAnyOrder() throws {
        #expect(try plan("export") == ExportPlan())
        #expect(try plan("export history to /tmp/x.jsonl limit=50") == ExportPlan(includesHistory: true, limit: 50, file: "/tmp/x.jsonl"))
        #expect(try plan("EXPORT limit=50 TO x.jsonl History") == ExportPlan(includesHistory: true, limit: 50, file: "x.jsonl"))
        // The word after `to` is the file, whatever it is.
        #expect(try plan("export to history") == ExportPlan(file: "history"))
        guard case .export(let plan)? = try CommandParser.parse(words: ["export", "to", "my exports/a b.jsonl"]) else {
            Issue.record("not an export")
            return
        }
        #expect(plan.file == "my exports/a b.jsonl")
    }

    @Test func aMissingFileARepeatedWordOrAStrayWordIsRefusedBeforeSending() throws {
        let spec = try spec("export")
        #expect(usageError("export to") == .badArguments(spec, reason: "to needs a FILE, such as to entitled-export.jsonl"))
        #expect(usageError("export history history") == .badArguments(spec, reason: "history is given twice"))
        #expect(usageError("export to a to b") == .badArguments(spec, reason: "to FILE is given twice"))
        #expect(usageError("export now") == .badArguments(spec, reason: "unexpected 'now'; export takes history, to FILE and limit=N"))
        #expect(usageError("export after=x") == .unusedOption(spec, option: "after"))
        #expect(usageError("export history to x.jsonl")?.message == nil)
    }

    @Test func theRequestsAreTheFirstPageThenEachNextUnchanged() {
        let plan = ExportPlan(includesHistory: true, limit: 50)
        #expect(plan.request(after: nil).jsonLine == #"{"op":"export","limit":50,"history":true}"#)
        #expect(plan.request(after: "5d67b2c3f67de49a.1").jsonLine == #"{"op":"export","after":"5d67b2c3f67de49a.1","limit":50,"history":true}"#)
        #expect(ExportPlan().request(after: nil).jsonLine == #"{"op":"export"}"#)
    }

    @Test func tabOffersHistoryToAndLimitAndNothingForTheFile() {
        let knowledge = SessionKnowledge()
        #expect(Completer.candidates(forLine: "export ", knowledge: knowledge).candidates == ["history", "limit=", "to"])
        #expect(Completer.candidates(forLine: "export history ", knowledge: knowledge).candidates == ["limit=", "to"])
        #expect(Completer.candidates(forLine: "export to ", knowledge: knowledge).candidates == [])
        #expect(Completer.candidates(forLine: "export to x.jsonl ", knowledge: knowledge).candidates == ["history", "limit="])
    }

    // MARK: reading the pages

    @Test func everyPageIsReadAndWrittenAsJSONLinesAfterTheHeader() throws {
        let answers = Answers([FeedLines.exportFirst, FeedLines.exportLast])
        let sink = Lines()
        let (summary, failure) = run(ExportPlan(includesHistory: true, limit: 1), answers, into: sink)
        #expect(failure == nil)
        #expect(answers.sent == [#"{"op":"export","limit":1,"history":true}"#, #"{"op":"export","after":"5d67b2c3f67de49a.1","limit":1,"history":true}"#])
        #expect(
            sink.written == [
                #"{"export":{"seq":9,"time":"2026-11-22T11:30:00.000Z"},"entitlements":{"pro":["p1","p2"]}}"#,
                #"{"membership":"# + FeedLines.membership + "}",
                #"{"history":{"time":"2026-11-22T11:00:00.000Z","actor":"local","action":"define","sequence":1,"entitlement":"pro","products":["p1","p2"]}}"#,
                #"{"membership":"# + FeedLines.claimed + "}",
                #"{"membership":"# + FeedLines.revoked + "}",
            ]
        )
        var expected = ExportSummary(sequence: 9, time: "2026-11-22T11:30:00.000Z")
        (expected.pages, expected.memberships, expected.historyEntries) = (2, 3, 1)
        #expect(summary == expected)
        // The reader leaves the sink open: the session puts a file in place only after the last page.
        #expect(!sink.finished)
    }

    @Test func theSummarySaysHowManyAndWhereTheChangeFeedGoesOn() {
        let renderer = ResponseRenderer(style: .plain, now: Instants.afterExamples)
        var summary = ExportSummary(sequence: 251, time: "2026-11-22T11:30:00.000Z")
        (summary.memberships, summary.historyEntries) = (250, 1)
        #expect(
            renderer.exportSummary(summary, plan: ExportPlan(includesHistory: true, file: "/tmp/x.jsonl"))
                == "exported 250 memberships and 1 history entry as of change 251 to /tmp/x.jsonl; the change feed continues after it: changes after=251"
        )
        summary.memberships = 1
        #expect(
            renderer.exportSummary(summary, plan: ExportPlan())
                == "exported 1 membership as of change 251; the change feed continues after it: changes after=251"
        )
    }

    @Test func aRefusedPageStopsTheExportWithTheServersErrorAndStatusOne() {
        let gone = #"{"ok":false,"error":{"code":"not_found","message":"this server holds no export 5d67b2c3f67de49a"}}"#
        let (summary, failure) = run(ExportPlan(), Answers([FeedLines.exportFirst, gone]), into: Lines())
        #expect(failure == .refused(ServerFailure(code: .notFound, message: "this server holds no export 5d67b2c3f67de49a")))
        #expect(failure?.outcome == .failedOnServer)
        #expect(summary?.pages == 1 && summary?.memberships == 1)
    }

    @Test func aLostConnectionStopsTheExportWithStatusTwo() {
        let (_, failure) = run(ExportPlan(), Answers([FeedLines.exportFirst]), into: Lines())
        #expect(failure == .connection(.connectionClosed(address: .tcp(host: "127.0.0.1", port: 7117))))
        #expect(failure?.outcome == .connectionError)
    }

    @Test func aPageOfAnotherExportOrACursorGivenTwiceStopsTheExport() {
        let other = FeedLines.exportLast.replacing(#""seq":9"#, with: #""seq":12"#)
        #expect(run(ExportPlan(), Answers([FeedLines.exportFirst, other]), into: Lines()).failure == .malformedPage("page 2 is of another export (change 12, not 9)"))
        let again = FeedLines.exportFirst.replacing(#""entitlements":{"pro":["p1","p2"]},"#, with: "")
        #expect(
            run(ExportPlan(), Answers([FeedLines.exportFirst, again]), into: Lines()).failure
                == .malformedPage("the server gave the next page's cursor 5d67b2c3f67de49a.1 twice; following it would never end")
        )
    }

    @Test func anAnswerThatIsNoPageOfAnExportStopsIt() {
        #expect(
            run(ExportPlan(), Answers([#"{"ok":true,"memberships":[]}"#]), into: Lines()).failure
                == .malformedPage(#"an answer to export without "export":{"seq":...,"time":...}"#)
        )
        let withoutHistory = FeedLines.exportLast.replacing(#","history":[]"#, with: "")
        let first = FeedLines.exportFirst.replacing(#","next":"5d67b2c3f67de49a.1""#, with: "")
        #expect(run(ExportPlan(includesHistory: true), Answers([first]), into: Lines()).failure == nil)
        #expect(
            run(ExportPlan(includesHistory: true), Answers([FeedLines.exportFirst, withoutHistory]), into: Lines()).failure
                == .malformedPage(#"an answer to export with history without its "history""#)
        )
    }
}
