import EntitledTestSupport
import Foundation
import Testing

/// `changes` against a real server: a page of the change feed as a table, the `more:` line that reads
/// the next page, the line that says where later changes start, a subject's changes alone, `--json`.
@Suite struct ChangeFeedTests {
    /// The rows of a table (without its header) and the line under it.
    func page(_ output: String) -> (rows: [String], under: String?) {
        var lines = output.split(separator: "\n").map(String.init)
        let under = lines.last.flatMap { $0.hasPrefix("more: ") || $0.hasPrefix("up to date") ? $0 : nil }
        if under != nil { lines.removeLast() }
        return (Array(lines.dropFirst()), under)
    }

    /// The change numbers (first column) of `rows`.
    func sequences(_ rows: [String]) -> [Int] {
        rows.compactMap { $0.split(separator: " ").first.flatMap { Int($0) } }
    }

    @Test func aPageShowsItsChangesAndItsMoreLineReadsTheNextUntilUpToDate() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        let script = "define pro prod_a\n" + (1...4).map { "grant user:u\($0) prod_a reason=r\($0)" }.joined(separator: "\n") + "\n"
        #expect(try ConsoleRun.run(port, input: script).status == 0)

        let first = try ConsoleRun.run(port + ["changes", "limit=2"])
        #expect(first.status == 0)
        #expect(first.standardError.isEmpty)
        let shown = page(first.standardOutput)
        #expect(first.standardOutput.hasPrefix("SEQ  TIME "))
        #expect(first.standardOutput.contains("  ACTOR  ACTION  SUBJECT  MEMBERSHIP         PRODUCT  STATUS  REASON\n"), "\(first.standardOutput)")
        #expect(shown.rows.count == 2)
        #expect(shown.rows[0].hasPrefix("1  ") && shown.rows[0].contains("  local  define  -        entitlement:pro    prod_a   -       -"), "\(shown.rows)")
        #expect(shown.rows[1].contains("  local  grant   user:u1  mem_") && shown.rows[1].hasSuffix("  prod_a   active  r1"), "\(shown.rows)")
        #expect(shown.under == "more: changes limit=2 after=2")

        // Following the more: lines reads every change once, in order, and the last page says so.
        var seen = sequences(shown.rows)
        var under = shown.under
        var pages = 1
        while let line = under, line.hasPrefix("more: ") {
            let run = try ConsoleRun.run(port + line.dropFirst("more: ".count).split(separator: " ").map(String.init))
            #expect(run.status == 0)
            let next = page(run.standardOutput)
            seen += sequences(next.rows)
            under = next.under
            pages += 1
        }
        #expect(seen == [1, 2, 3, 4, 5])
        #expect(pages == 3)
        #expect(under == "up to date at change 5; later changes: changes limit=2 after=5")

        // After the newest change there is nothing yet; a change made since is the next page.
        #expect(try ConsoleRun.run(port + ["changes", "after=5"]).standardOutput == "(no changes)\nup to date at change 5; later changes: changes after=5\n")
        #expect(try ConsoleRun.run(port + ["grant", "user:u9", "prod_a"]).status == 0)
        let later = page(try ConsoleRun.run(port + ["changes", "after=5"]).standardOutput)
        #expect(sequences(later.rows) == [6])
        #expect(later.rows.first?.contains("user:u9") == true)
    }

    @Test func aSubjectsPageShowsOnlyItsMembershipsChangesAndTheErasures() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        let script = "grant device:d1 prod_a\ngrant user:u2 prod_b\nclaim device:d1 user:u1\ndefine pro prod_a\n"
        #expect(try ConsoleRun.run(port, input: script).status == 0)
        #expect(try ConsoleRun.run(port + ["--yes", "erase", "user:u2"]).status == 0)
        let run = try ConsoleRun.run(port + ["changes", "user:u1"])
        #expect(run.status == 0)
        let shown = page(run.standardOutput)
        // The claim made it u1's (its grant to the device concerned only the device); the erasure of
        // u2 names no one, and is in every subject's feed; the catalog's change is in none.
        #expect(sequences(shown.rows) == [3, 5], "\(run.standardOutput)")
        #expect(shown.rows.first?.contains("  claim   user:u1 on device:d1  mem_") == true, "\(shown.rows)")
        #expect(shown.rows.last?.contains("  erase   -                     1 membership, 1 history entry  -        -       -") == true, "\(shown.rows)")
        #expect(shown.under == "up to date at change 5; later changes: changes user:u1 after=5")
        let device = page(try ConsoleRun.run(port + ["changes", "device:d1"]).standardOutput)
        #expect(sequences(device.rows) == [1, 3, 5])
        // The whole feed no longer holds the erased person's grant.
        #expect(sequences(page(try ConsoleRun.run(port + ["changes"]).standardOutput).rows) == [1, 3, 4, 5])
    }

    @Test func onTheTerminalTabCompletesTheCommandsWordsAndOptions() throws {
        let server = try RunningEntitled()
        #expect(try ConsoleRun.run(["--port", String(server.port), "grant", "user:u1", "prod_a"]).status == 0)
        let terminal = try PseudoTerminal.console(server)
        try terminal.waitFor("127.0.0.1:\(server.port)> ")
        try terminal.type("chan\t")
        try terminal.waitFor("changes ")
        try terminal.type("li\t")
        try terminal.waitFor("limit=")
        try terminal.type("1\r")
        try terminal.waitFor("local  grant   user:u1  mem_")
        try terminal.waitFor("up to date at change 1; later changes: changes limit=1 after=1")
        try terminal.waitFor("> ")
        try terminal.type("export hi\t")
        try terminal.waitFor("history ")
        try terminal.type("t\t")
        try terminal.waitFor("to ")
        // A relative FILE is written where the console runs (here, the server's directory).
        try terminal.type("copy.jsonl\r")
        try terminal.waitFor("exported 1 membership and 1 history entry as of change 1 to copy.jsonl; the change feed continues after it: changes after=1")
        try terminal.waitFor("> ")
        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)
        #expect(FileManager.default.fileExists(atPath: server.directory.path + "/copy.jsonl"))
    }

    @Test func jsonPrintsTheServersLineAsItIs() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        #expect(try ConsoleRun.run(port + ["grant", "user:u1", "prod_a"]).status == 0)
        let run = try ConsoleRun.run(port + ["--json", "changes", "limit=1"])
        #expect(run.status == 0)
        #expect(run.standardOutput.hasPrefix(#"{"ok":true,"changes":[{"time":""#), "\(run.standardOutput)")
        #expect(run.standardOutput.hasSuffix(#""next":1,"newest":1,"oldestAfterSeq":0}"# + "\n"), "\(run.standardOutput)")
        #expect(!run.standardOutput.contains("up to date"))
    }

    @Test func withoutAnAdminTokenTheServerRefusesAndTheConsoleExitsOne() throws {
        let server = try RunningEntitled.requiringTokens()
        let run = try ConsoleRun.run(server.portOption + ["changes"], environment: ["ENTITLED_TOKEN": AuthFileEntry.check.token])
        #expect(run.status == 1)
        #expect(run.standardError.hasPrefix("(error) forbidden: "), "\(run.standardError)")
        #expect(run.standardOutput.isEmpty)
    }
}
