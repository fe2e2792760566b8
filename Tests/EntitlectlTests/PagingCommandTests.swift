import EntitledTestSupport
import Foundation
import Testing

/// `show` and `history` a page at a time against a real server: `limit=N`, `after=CURSOR`, and the
/// `more:` line that gives the command for the next page.
@Suite struct PagingCommandTests {
    /// The rows of a table, without its header and the `more:` line, and the command of that line.
    func page(_ output: String) -> (rows: [String], more: String?) {
        var lines = output.split(separator: "\n").map(String.init)
        var more: String?
        if let last = lines.last, last.hasPrefix("more: ") {
            more = String(last.dropFirst("more: ".count))
            lines.removeLast()
        }
        return (Array(lines.dropFirst()), more)
    }

    @Test func followingTheMoreLinesListsEveryMembershipOnceNewestFirst() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        let grants = (1...5).map { "grant user:u1 prod_\($0)" }.joined(separator: "\n") + "\n"
        #expect(try ConsoleRun.run(port, input: grants).status == 0)

        let whole = page(try ConsoleRun.run(port + ["show", "user:u1"]).standardOutput)
        #expect(whole.rows.count == 5)
        #expect(whole.more == nil)
        #expect(whole.rows.first?.contains("prod_5") == true)

        var rows: [String] = []
        var command: [String]? = ["show", "user:u1", "limit=2"]
        var commands: [String] = []
        while let words = command {
            let run = try ConsoleRun.run(port + words)
            #expect(run.status == 0)
            #expect(run.standardError.isEmpty)
            let shown = page(run.standardOutput)
            rows += shown.rows
            commands.append(words.joined(separator: " "))
            command = shown.more?.split(separator: " ").map(String.init)
        }
        #expect(rows == whole.rows)
        #expect(commands.count == 3)
        #expect(commands.dropFirst().allSatisfy { $0.hasPrefix("show user:u1 limit=2 after=mem_") }, "\(commands)")

        // --json prints the server's line, whose "next" says the same; no more: line is added.
        let json = try ConsoleRun.run(port + ["--json", "show", "user:u1", "limit=2"])
        #expect(json.standardOutput.hasPrefix(#"{"ok":true,"memberships":["#))
        #expect(json.standardOutput.contains(#""next":"mem_"#))
        #expect(!json.standardOutput.contains("more:"))
    }

    @Test func historyPagesEndWithTheCommandForTheNextAndTheLastWithNone() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        let script = "grant user:u1 prod_a\ngrant user:u1 prod_b\ngrant user:u1 prod_c\n"
        #expect(try ConsoleRun.run(port, input: script).status == 0)

        let first = page(try ConsoleRun.run(port + ["history", "user:u1", "limit=2"]).standardOutput)
        #expect(first.rows.count == 2)
        let more = try #require(first.more)
        #expect(more.hasPrefix("history user:u1 limit=2 after="))
        let second = try ConsoleRun.run(port + more.split(separator: " ").map(String.init))
        #expect(second.status == 0)
        let last = page(second.standardOutput)
        #expect(last.rows.count == 1)
        #expect(last.rows.first?.contains("prod_a") == true)
        #expect(last.more == nil)

        // A cursor the server did not give is its error to report.
        let bad = try ConsoleRun.run(port + ["history", "user:u1", "after=nonsense"])
        #expect(bad.status == 1)
        #expect(bad.standardError.hasPrefix("(error) bad_request: "), "\(bad.standardError)")
    }

    @Test func onTheTerminalTabCompletesTheOptionsAndTheMoreLineFollowsTheTable() throws {
        let server = try RunningEntitled()
        #expect(try ConsoleRun.run(["--port", String(server.port)], input: "grant user:u1 prod_old\ngrant user:u1 prod_new\n").status == 0)
        let terminal = try PseudoTerminal(
            executable: ConsoleRun.executableURL,
            arguments: ["--port", String(server.port)],
            environment: [
                "TERM": "xterm", "HOME": server.directory.path, "ENTITLECTL_HISTFILE": "/dev/null",
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            ]
        )
        try terminal.waitFor("127.0.0.1:\(server.port)> ")
        try terminal.type("show user:u1 li\t")
        try terminal.waitFor("limit=")
        try terminal.type("1 af\t")
        try terminal.waitFor("after=")
        // An after= with nothing yet is refused by the console; the line is cleared and typed anew.
        try terminal.type("\u{15}show user:u1 limit=1\r")
        try terminal.waitFor("prod_new")
        try terminal.waitFor("more: show user:u1 limit=1 after=mem_")
        try terminal.waitFor("> ")
        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)
    }
}
