import EntitledTestSupport
import Foundation
import Testing

/// `extend` against a real server: one-shot, in a script and at the prompt. It moves the expiry later,
/// says from what to what, is not asked first (it only adds access), and the history keeps both
/// expiries.
@Suite struct ExtendCommandTests {
    /// A membership granted for 732 hours (30 days and 12 hours, so its hint reads "in 30 days" however
    /// long the commands take): its id and expiry, as the server wrote them.
    func grant(_ port: [String], user: String) throws -> (id: String, expiresAt: String) {
        let run = try ConsoleRun.run(port + ["--json", "grant", "user:\(user)", "prod_pro", "732h"])
        #expect(run.status == 0, "\(run.standardError)")
        let membership = try #require(try answer(run.standardOutput)["membership"] as? [String: Any])
        return (try #require(membership["id"] as? String), try #require(membership["expiresAt"] as? String))
    }

    /// The expiry membership `id` of `user` has now.
    func expiry(_ port: [String], user: String, id: String) throws -> String {
        let run = try ConsoleRun.run(port + ["--json", "show", "user:\(user)"])
        let memberships = try #require(try answer(run.standardOutput)["memberships"] as? [[String: Any]])
        return try #require(memberships.first { $0["id"] as? String == id }?["expiresAt"] as? String)
    }

    func answer(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    /// A line with runs of spaces taken as one (table columns are padded).
    func squeezed(_ line: some StringProtocol) -> String {
        line.split(separator: " ").joined(separator: " ")
    }

    @Test func oneShotExtendMovesTheExpiryLaterSaysFromWhatToWhatAndNeedsNoYes() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        let (id, granted) = try grant(port, user: "u1")

        let byDuration = try ConsoleRun.run(port + ["extend", id, "7d", "outage", "on", "2026-11-20"])
        #expect(byDuration.status == 0)
        #expect(byDuration.standardError.isEmpty)
        let lines = byDuration.standardOutput.split(separator: "\n")
        #expect(lines.count == 3, "\(byDuration.standardOutput)")
        #expect(lines.first?.hasPrefix("ID                 PRODUCT   STATUS  ACTIVE  EXPIRES") == true)
        #expect(lines.dropFirst().first?.hasPrefix("\(id)  prod_pro  active  yes     ") == true)
        let extended = try expiry(port, user: "u1", id: id)
        #expect(lines.last == "expiry moved from \(granted) (in 30 days) to \(extended) (in 37 days)", "\(byDuration.standardOutput)")

        let untilTime = try ConsoleRun.run(port + ["extend", id, "until", "2099-01-01", "reason=goodwill"])
        #expect(untilTime.status == 0, "\(untilTime.standardError)")
        #expect(untilTime.standardOutput.contains("\nexpiry moved from \(extended) (in 37 days) to 2099-01-01T00:00:00Z (in "))

        // Not later than the expiry: the server refuses, status 1.
        let earlier = try ConsoleRun.run(port + ["extend", id, "2098-01-01T00:00:00Z"])
        #expect(earlier.status == 1)
        #expect(earlier.standardOutput.isEmpty)
        #expect(earlier.standardError.hasPrefix("(error) bad_request: expiresAt 2098-01-01T00:00:00Z is not later than the expiry"))

        let history = try ConsoleRun.run(port + ["history", "user:u1"])
        #expect(history.status == 0)
        let rows = history.standardOutput.split(separator: "\n").map { squeezed($0) }
        #expect(rows.count == 4, "\(history.standardOutput)")
        #expect(rows.first == "TIME ACTOR ACTION MEMBERSHIP PRODUCT REASON EXPIRY")
        // Each row after its time and hint ("(just now)"): newest first, each extension with both expiries.
        #expect(rows.dropFirst().map { $0.split(separator: " ").dropFirst(3).joined(separator: " ") } == [
            "local extend \(id) prod_pro goodwill moved from \(extended) (in 37 days) to 2099-01-01T00:00:00Z (\(try hint(of: "2099-01-01T00:00:00Z", in: history.standardOutput)))",
            "local extend \(id) prod_pro outage on 2026-11-20 moved from \(granted) (in 30 days) to \(extended) (in 37 days)",
            "local grant \(id) prod_pro -",
        ])
    }

    /// The hint shown after `time` in `text` (`in 72 years`), which depends on the year the test runs in.
    func hint(of time: String, in text: String) throws -> String {
        let after = try #require(text.range(of: time + " (")).upperBound
        return String(text[after...].prefix { $0 != ")" })
    }

    @Test func oneShotExtendRefusalsSayWhyWithTheirStatus() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]

        let ambiguous = try ConsoleRun.run(port + ["extend", "mem_0000000000000", "1m"])
        #expect(ambiguous.status == 2)
        #expect(ambiguous.standardError == "error: '1m' is ambiguous: 1min for minutes, 1mo for calendar months\nusage: extend MEMBERSHIP DURATION | TIME [REASON...]\n")
        let missing = try ConsoleRun.run(port + ["extend", "mem_0000000000000"])
        #expect(missing.status == 2)
        #expect(missing.standardError.hasPrefix("error: a DURATION (such as 1mo) or a TIME (such as 2027-01-01) is required"))

        let unknown = try ConsoleRun.run(port + ["extend", "mem_0000000000000", "1mo"])
        #expect(unknown.status == 1)
        #expect(unknown.standardError == "(error) not_found: no membership has the id \"mem_0000000000000\"\n")

        let lifetime = firstMembershipID(in: try ConsoleRun.run(port + ["grant", "user:u2", "prod_life", "lifetime"]).standardOutput)
        let forever = try ConsoleRun.run(port + ["extend", lifetime, "1mo"])
        #expect(forever.status == 1)
        #expect(forever.standardError.hasPrefix("(error) conflict: membership \(lifetime) never expires (lifetime access)"))

        let (id, _) = try grant(port, user: "u3")
        #expect(try ConsoleRun.run(port + ["--yes", "revoke", id, "refund"]).status == 0)
        let revoked = try ConsoleRun.run(port + ["extend", id, "1mo"])
        #expect(revoked.status == 1)
        #expect(revoked.standardError.hasPrefix("(error) conflict: membership \(id) was revoked (refund, "))
        #expect(revoked.standardError.contains("a revoked membership cannot be extended; grant a new one"))
    }

    @Test func aScriptExtendsWithoutYesAndItsWatchAndHistoryShowTheMove() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        let (id, granted) = try grant(port, user: "u1")
        let expired = firstMembershipID(in: try ConsoleRun.run(port + ["grant", "user:u1", "prod_old", "until", "2020-01-01"]).standardOutput)
        let script = """
            watch user:u1
            # the outage of 2026-11-20: a week more
            extend \(id) 7d "outage on 2026-11-20"
            # an expired membership is extended from now
            extend \(expired) 36h reason=goodwill
            history user:u1 limit=2
            ping
            ping
            """
        let run = try ConsoleRun.run(port, input: script + "\n")
        #expect(run.status == 0)
        #expect(run.standardError.isEmpty, "\(run.standardError)")
        let output = run.standardOutput
        let extended = try expiry(port, user: "u1", id: id)
        #expect(output.contains("\nexpiry moved from \(granted) (in 30 days) to \(extended) (in 37 days)\n"), "\(output)")
        #expect(output.contains("  prod_old  active  yes  "))
        #expect(output.contains("\nexpiry moved from 2020-01-01T00:00:00Z ("))
        #expect(output.contains(" ago) to 20"))
        #expect(output.contains("Z (in 1 day)\n"))
        // The history's newest two entries, both extensions, each with the expiry before and after.
        let header = try #require(output.split(separator: "\n").first { $0.hasPrefix("TIME ") })
        #expect(squeezed(header) == "TIME ACTOR ACTION MEMBERSHIP PRODUCT REASON EXPIRY")
        let rows = output.split(separator: "\n").map { squeezed($0) }
        #expect(rows.contains { $0.hasSuffix(" local extend \(id) prod_pro outage on 2026-11-20 moved from \(granted) (in 30 days) to \(extended) (in 37 days)") })
        #expect(rows.contains { $0.contains(" local extend \(expired) prod_old goodwill moved from 2020-01-01T00:00:00Z (") && $0.hasSuffix(" (in 1 day)") })
        // The watch saw both changes, pushed with cause extend.
        #expect(output.contains("push extend: \(id) prod_pro active, access until \(extended) (in 37 days), user:u1\n"), "\(output)")
        #expect(output.contains("push extend: \(expired) prod_old active, access until "))
    }

    @Test func atThePromptExtendCompletesTheMembershipHintsItsArgumentsAndAsksNothing() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        let (id, granted) = try grant(port, user: "prompt")
        let terminal = try PseudoTerminal.console(server)
        try terminal.waitFor("127.0.0.1:\(server.port)> ")
        try terminal.type("show user:prompt\r")
        try terminal.waitFor("prod_pro")
        try terminal.waitFor("> ")

        try terminal.type("ext\t")
        try terminal.waitFor("extend ")
        try terminal.waitFor("MEMBERSHIP DURATION | TIME [REASON...]")
        try terminal.type("mem_\t")
        try terminal.waitFor(String(id.dropFirst(4)))
        try terminal.type("7d outage\r")
        try terminal.waitFor("expiry moved from \(granted) (in 30 days) to ")
        try terminal.waitFor("(in 37 days)")
        try terminal.waitFor("> ")
        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)
        #expect(try ConsoleRun.run(port + ["--json", "history", "user:prompt"]).standardOutput.contains(#""action":"extend","reason":"outage""#))
    }
}
