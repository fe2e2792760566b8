import EntitledTestSupport
import Foundation
import Testing

/// Commands piped into `entitlectl`: a script, read line by line.
@Suite struct ScriptModeTests {
    @Test func scriptRunsEveryLineInOrderSkippingBlanksAndComments() throws {
        let server = try RunningEntitled()
        let script = """
            # set up a guest purchase and claim it
            define pro prod_pro

            grant device:d1 prod_pro 30d
            claim device:d1 user:u1
            check user:u1 entitlement:pro
            """
        let run = try ConsoleRun.run(["--port", String(server.port)], input: script + "\n")
        #expect(run.status == 0)
        #expect(run.standardError.isEmpty)
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        #expect(lines[0] == "pro is unlocked by prod_pro")
        #expect(lines[3] == "claimed 1 membership")
        #expect(lines[4].hasPrefix("active until "))
    }

    @Test func scriptStopsAtTheFirstFailureWithItsStatus() throws {
        let server = try RunningEntitled()
        let script = "grant user:u1 prod_a\nrevoke mem_0000000000000\ngrant user:u1 prod_b\n"
        let run = try ConsoleRun.run(["--port", String(server.port), "--yes"], input: script)
        #expect(run.status == 1)
        let show = try ConsoleRun.run(["--port", String(server.port), "--json", "show", "user:u1"])
        #expect(show.standardOutput.contains("prod_a"))
        #expect(!show.standardOutput.contains("prod_b"))

        let usage = try ConsoleRun.run(["--port", String(server.port)], input: "frobnicate\ngrant user:u2 prod_c\n")
        #expect(usage.status == 2)
        let untouched = try ConsoleRun.run(["--port", String(server.port), "show", "user:u2"])
        #expect(untouched.standardOutput == "(no memberships)\n")
    }

    @Test func continueRunsPastFailuresAndExitsWithTheWorstStatus() throws {
        let server = try RunningEntitled()
        let script = "revoke mem_0000000000000\nfrobnicate\ngrant user:u1 prod_b\n"
        let run = try ConsoleRun.run(["--port", String(server.port), "--continue", "--yes"], input: script)
        #expect(run.status == 2)
        #expect(run.standardError.contains("(error) not_found"))
        #expect(run.standardError.contains("unknown command 'frobnicate'"))
        #expect(run.standardOutput.contains("prod_b"))
    }

    @Test func quitEndsTheScript() throws {
        let server = try RunningEntitled()
        let run = try ConsoleRun.run(["--port", String(server.port)], input: "ping\nquit\ngrant user:u1 prod_after_quit\n")
        #expect(run.status == 0)
        #expect(run.standardOutput == "pong\n")
        let show = try ConsoleRun.run(["--port", String(server.port), "show", "user:u1"])
        #expect(show.standardOutput == "(no memberships)\n")
    }

    @Test func scriptAgainstAServerThatIsDownStopsWithStatusTwo() throws {
        let server = try RunningEntitled()
        let port = server.port
        server.stop()
        let run = try ConsoleRun.run(["--port", String(port)], input: "ping\nping\n")
        #expect(run.status == 2)
        #expect(run.standardError == "line 1: error: cannot connect to 127.0.0.1:\(port): connection refused\n")
    }

    @Test func aScriptCanWatchAndShowsTheChangesPushedAfterEachCommand() throws {
        let server = try RunningEntitled()
        let script = """
            watch user:u1
            grant user:u1 prod_pro lifetime
            ping
            ping
            """
        let run = try ConsoleRun.run(["--port", String(server.port)], input: script + "\n")
        #expect(run.status == 0)
        let output = run.standardOutput
        #expect(output.hasPrefix("1 watch on this connection; changes are shown as the server pushes them\n"))
        // The server pushes the grant's change once it is durable, unordered with the answers that follow
        // (PROTOCOL.md): the push is shown after the grant's answer, before or after the pongs, and before
        // the script ends.
        let grantRow = try #require(output.range(of: "  prod_pro  active  yes     lifetime  no      manual  user:u1\n"))
        let push = try #require(output.range(of: "push grant: mem_"))
        #expect(grantRow.upperBound <= push.lowerBound)
        #expect(output.components(separatedBy: "pong\n").count - 1 == 2, "\(output)")
        #expect(output.contains(" prod_pro active, access for life, user:u1\n"))
    }
}
