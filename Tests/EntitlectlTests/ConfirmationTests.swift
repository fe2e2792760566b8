import EntitledTestSupport
import Foundation
import Testing

/// `revoke`, `undefine` and `erase` are meant: interactively they show what they will touch and ask
/// `y/N`; one-shot commands and scripts must say `--yes`, and without it nothing is sent.
@Suite struct ConfirmationTests {
    @Test func interactivelyRevokeShowsTheMembershipAsksAndOnlyYesTakesItBack() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        let id = firstMembershipID(in: try ConsoleRun.run(port + ["grant", "user:asked", "prod_asked"]).standardOutput)
        let terminal = try PseudoTerminal.console(server)
        try terminal.waitFor("127.0.0.1:\(server.port)> ")
        try terminal.type("show user:asked\r")
        try terminal.waitFor("prod_asked")
        try terminal.waitFor("> ")

        try terminal.type("revoke \(id) refund\r")
        try terminal.waitFor("this takes back:")
        try terminal.waitFor("\(id)  prod_asked  active")
        try terminal.waitFor("revoke \(id)? [y/N] ")
        try terminal.type("\r")  // the default: no
        try terminal.waitFor("nothing was revoked")
        #expect(try ConsoleRun.run(port + ["--json", "show", "user:asked"]).standardOutput.contains(#""status":"active""#))

        try terminal.waitFor("> ")
        try terminal.type("revoke \(id) refund\r")
        try terminal.waitFor("revoke \(id)? [y/N] ")
        try terminal.type("y\r")
        try terminal.waitFor("revoked (refund)")
        try terminal.waitFor("> ")
        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)
        #expect(try ConsoleRun.run(port + ["--json", "show", "user:asked"]).standardOutput.contains(#""status":"revoked""#))
    }

    @Test func interactivelyUndefineAndEraseShowWhatTheyRemoveAndNoSendsNothing() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        #expect(try ConsoleRun.run(port + ["define", "pro", "prod_pro"]).status == 0)
        #expect(try ConsoleRun.run(port + ["grant", "user:gone", "prod_pro"]).status == 0)
        let terminal = try PseudoTerminal.console(server)
        try terminal.waitFor("> ")
        try terminal.type("undefine pro\r")
        try terminal.waitFor("this removes from the catalog:")
        try terminal.waitFor("pro          prod_pro")
        try terminal.waitFor("afterwards no product unlocks pro")
        try terminal.waitFor("undefine pro? [y/N] ")
        try terminal.type("n\r")
        try terminal.waitFor("nothing was removed")
        try terminal.waitFor("> ")
        try terminal.type("erase user:gone\r")
        try terminal.waitFor("this erases user:gone for good: 1 membership, ")
        try terminal.waitFor("prod_pro  active")
        try terminal.waitFor("erase user:gone? [y/N] ")
        try terminal.type("no\r")
        try terminal.waitFor("nothing was erased")
        try terminal.waitFor("> ")
        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)
        // define, grant, then the console's reads: the catalog at its start, the catalog and the memberships
        // it showed. Neither undefine nor erase was sent.
        let stats = try ConsoleRun.run(port + ["stats"]).standardOutput
        #expect(stats.contains("requests     5 in all"), "\(stats)")
        #expect(try ConsoleRun.run(port + ["catalog"]).standardOutput.contains("prod_pro"))
    }

    @Test func interactivelyRevokeOfAMembershipNotSeenYetStillAsks() throws {
        let server = try RunningEntitled()
        let id = firstMembershipID(in: try ConsoleRun.run(["--port", String(server.port), "grant", "user:unseen", "prod_unseen"]).standardOutput)
        let terminal = try PseudoTerminal.console(server)
        try terminal.waitFor("> ")
        try terminal.type("revoke \(id)\r")
        try terminal.waitFor("this session has not seen that membership")
        try terminal.waitFor("[y/N] ")
        try terminal.type("n\r")
        try terminal.waitFor("nothing was revoked")
    }

    @Test func withYesTheConsoleDoesNotAsk() throws {
        let server = try RunningEntitled()
        let id = firstMembershipID(in: try ConsoleRun.run(["--port", String(server.port), "grant", "user:sure", "prod_sure"]).standardOutput)
        let terminal = try PseudoTerminal.console(server, arguments: ["--yes"])
        try terminal.waitFor("> ")
        try terminal.type("revoke \(id) refund\r")
        let drawn = try terminal.waitFor("revoked (refund)")
        #expect(!drawn.contains("[y/N]"))
    }

    @Test func oneShotRemovalsWithoutYesAreRefusedWithStatusTwoAndSendNothing() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        #expect(try ConsoleRun.run(port + ["define", "pro", "prod_pro"]).status == 0)
        let id = firstMembershipID(in: try ConsoleRun.run(port + ["grant", "user:kept", "prod_pro"]).standardOutput)

        for command in [["revoke", id, "refund"], ["undefine", "pro"], ["erase", "user:kept"]] {
            let run = try ConsoleRun.run(port + command)
            #expect(run.status == 2, "\(command)")
            #expect(run.standardOutput.isEmpty)
            #expect(
                run.standardError
                    == "error: \(command[0]) needs confirmation, and there is nobody to ask here: run it as entitlectl --yes \(command[0]) ... (nothing was sent)\n"
            )
        }
        // Nothing reached the server: only the define and the grant were requests.
        let stats = try ConsoleRun.run(port + ["stats"]).standardOutput
        #expect(stats.contains("requests     2 in all"), "\(stats)")
        #expect(try ConsoleRun.run(port + ["--json", "show", "user:kept"]).standardOutput.contains(#""status":"active""#))

        let confirmed = try ConsoleRun.run(port + ["--yes", "revoke", id, "refund"])
        #expect(confirmed.status == 0)
        #expect(confirmed.standardOutput.contains("revoked (refund)"))
    }

    @Test func aScriptWithoutYesStopsAtTheRevokeNamingItsLine() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        let id = firstMembershipID(in: try ConsoleRun.run(port + ["grant", "user:scripted", "prod_s"]).standardOutput)
        let run = try ConsoleRun.run(port, input: "ping\nrevoke \(id)\ngrant user:scripted prod_after\n")
        #expect(run.status == 2)
        #expect(run.standardError.hasPrefix("line 2: error: revoke needs confirmation"), "\(run.standardError)")
        let show = try ConsoleRun.run(port + ["--json", "show", "user:scripted"]).standardOutput
        #expect(show.contains(#""status":"active""#) && !show.contains("prod_after"))

        let confirmed = try ConsoleRun.run(port + ["--yes"], input: "revoke \(id) refund\n")
        #expect(confirmed.status == 0)
        #expect(try ConsoleRun.run(port + ["--json", "show", "user:scripted"]).standardOutput.contains(#""status":"revoked""#))
    }
}
