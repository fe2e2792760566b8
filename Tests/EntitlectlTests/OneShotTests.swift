import EntitledTestSupport
import Testing

/// `entitlectl COMMAND ARGS...` against a real server: one command, its answer, its exit status.
@Suite struct OneShotTests {
    @Test func answeredCommandsPrintReadableAnswersAndExitZero() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        let define = try ConsoleRun.run(port + ["define", "pro", "prod_pro_y", "prod_pro_m"])
        #expect(define.status == 0)
        #expect(define.standardOutput == "pro is unlocked by prod_pro_m, prod_pro_y\n")

        // 732 hours are 30 days and 12 hours: the relative hint, rounded down, reads "in 30 days" however
        // long the commands take, where a grant of exactly 30d reads "in 30 days" or "in 29 days"
        // depending on whether the console's clock has moved past the server's millisecond.
        let grant = try ConsoleRun.run(port + ["grant", "device:d1", "prod_pro_m", "732h", "source=app_store"])
        #expect(grant.status == 0)
        let lines = grant.standardOutput.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("ID                 PRODUCT     STATUS  ACTIVE  EXPIRES") == true)
        #expect(lines.last?.contains("prod_pro_m  active  yes") == true)
        #expect(lines.last?.contains("(in 30 days)  no      app_store  device:d1 (guest)") == true, "\(grant.standardOutput)")

        let check = try ConsoleRun.run(port + ["check", "device:d1", "entitlement:pro"])
        #expect(check.status == 0)
        #expect(check.standardOutput.hasPrefix("active until "))
        #expect(check.standardOutput.hasSuffix(" (in 30 days)\n"))

        let claim = try ConsoleRun.run(port + ["claim", "device:d1", "user:u1"])
        #expect(claim.standardOutput == "claimed 1 membership\n")
        let notActive = try ConsoleRun.run(port + ["check", "device:d1", "entitlement:pro"])
        #expect(notActive.status == 0)
        #expect(notActive.standardOutput == "not active\n")
    }

    @Test func outputIsPlainWhenStdoutIsNotATerminal() throws {
        let server = try RunningEntitled()
        let run = try ConsoleRun.run(["--port", String(server.port), "grant", "user:u1", "prod_x"])
        #expect(run.status == 0)
        #expect(!run.standardOutput.contains("\u{1B}["))
    }

    @Test func errorResponseExitsOneWithTheServersCodeAndMessage() throws {
        let server = try RunningEntitled()
        let run = try ConsoleRun.run(["--port", String(server.port), "--yes", "revoke", "mem_0000000000000", "refund"])
        #expect(run.status == 1)
        #expect(run.standardOutput.isEmpty)
        #expect(run.standardError == "(error) not_found: no membership has the id \"mem_0000000000000\"\n")
    }

    @Test func badArgumentsExitTwoWithTheUsageLineAndSendNothing() throws {
        let server = try RunningEntitled()
        let run = try ConsoleRun.run(["--port", String(server.port), "grant", "user:u1"])
        #expect(run.status == 2)
        #expect(
            run.standardError
                == "error: a PRODUCT is required\nusage: grant SUBJECT [SUBJECT] PRODUCT [DURATION | until TIME | lifetime] [source=SOURCE] [plan=PLAN] [OPTION=VALUE...]\n"
        )
        let show = try ConsoleRun.run(["--port", String(server.port), "show", "user:u1"])
        #expect(show.standardOutput == "(no memberships)\n")
    }

    @Test func unknownCommandSuggestsTheClosestOne() throws {
        let run = try ConsoleRun.run(["--port", "1", "grnat", "user:u1", "prod"])
        #expect(run.status == 2)
        #expect(run.standardError == "error: unknown command 'grnat'; did you mean grant?\n")
    }

    @Test func serverDownIsAConnectionErrorWithExitTwoAndNoStackTrace() throws {
        // A port that was free a moment ago: nothing listens there.
        let server = try RunningEntitled()
        let port = server.port
        server.stop()
        let run = try ConsoleRun.run(["--port", String(port), "check", "user:u1"])
        #expect(run.status == 2)
        #expect(run.standardError == "error: cannot connect to 127.0.0.1:\(port): connection refused\n")
        #expect(run.standardOutput.isEmpty)
    }

    @Test func jsonFlagPrintsTheServersResponseLinesAsTheyAre() throws {
        let server = try RunningEntitled()
        let grant = try ConsoleRun.run(["--port", String(server.port), "--json", "grant", "user:u1", "prod_x", "lifetime"])
        #expect(grant.status == 0)
        #expect(grant.standardOutput.hasPrefix("{\"ok\":true,\"seq\":1,\"membership\":{\"id\":\"mem_"))
        let check = try ConsoleRun.run(["--port", String(server.port), "--json", "check", "user:u1", "prod_x"])
        #expect(check.standardOutput == "{\"ok\":true,\"active\":true,\"expiresAt\":null}\n")
        let failure = try ConsoleRun.run(["--port", String(server.port), "--json", "check", "user:u1", "entitlement:nope"])
        #expect(failure.status == 1)
        #expect(failure.standardOutput.hasPrefix("{\"ok\":false,\"error\":{\"code\":\"not_found\""))
    }

    @Test func rawSendsTheLineAsTypedAndPrintsTheResponseLine() throws {
        let server = try RunningEntitled()
        let run = try ConsoleRun.run(["--port", String(server.port), "raw", #"{"op":"ping","id":[1,"x"]}"#])
        #expect(run.status == 0)
        #expect(run.standardOutput == #"{"ok":true,"id":[1,"x"]}"# + "\n")
        let bad = try ConsoleRun.run(["--port", String(server.port), "raw", #"{"op":"refund"}"#])
        #expect(bad.status == 1)
        #expect(bad.standardError.hasPrefix(#"{"ok":false,"error":{"code":"unknown_op""#))
    }

    @Test func connectsOverAUnixSocket() throws {
        let server = try RunningEntitled(unixSocket: true)
        let run = try ConsoleRun.run(["--socket", try #require(server.socketPath), "ping"])
        #expect(run.status == 0)
        #expect(run.standardOutput == "pong\n")
        let missing = try ConsoleRun.run(["--socket", server.directory.path + "/missing.sock", "ping"])
        #expect(missing.status == 2)
        #expect(missing.standardError == "error: cannot connect to unix:\(server.directory.path)/missing.sock: no such file or directory\n")
    }

    /// A server without `--auth` (or one predating authentication) admits every client: a token given
    /// anyway, say from an environment shared by several servers, earns a warning, not a failure.
    @Test func tokenForAServerWithoutAuthenticationIsAWarningNotAFailure() throws {
        let server = try RunningEntitled()
        let run = try ConsoleRun.run(["--port", String(server.port), "ping"], environment: ["ENTITLED_TOKEN": "s3cret"])
        #expect(run.status == 0)
        #expect(run.standardOutput == "pong\n")
        #expect(run.standardError == "warning: 127.0.0.1:\(server.port) requires no authentication; the token was not needed\n")
    }

    @Test func invalidOptionsExitTwo() throws {
        let run = try ConsoleRun.run(["--port", "seventy", "ping"])
        #expect(run.status == 2)
        #expect(run.standardError.contains("--port"))
        for timeout in ["0", "-1", "inf", "nan", "100000"] {
            let run = try ConsoleRun.run(["--timeout=\(timeout)", "ping"])
            #expect(run.status == 2, "--timeout \(timeout)")
            #expect(run.standardError.contains("--timeout must be more than 0 and at most 86400 seconds"), "--timeout \(timeout)")
        }
        let unknown = try ConsoleRun.run(["--bogus", "ping"])
        #expect(unknown.status == 2)
        #expect(unknown.standardError.hasPrefix("error: unknown option '--bogus'"))
        let help = try ConsoleRun.run(["--help"])
        #expect(help.status == 0)
        #expect(help.standardOutput.contains("USAGE: entitlectl"))
    }

    @Test func helpListsEveryCommandAndExplainsOne() throws {
        let overview = try ConsoleRun.run(["help"])
        #expect(overview.status == 0)
        for name in [
            "check", "grant", "claim", "revoke", "extend", "event", "show", "customer", "history", "define", "undefine", "erase", "catalog",
            "watch", "unwatch",
            "snapshot", "raw", "help",
        ] {
            #expect(overview.standardOutput.contains("\n  \(name) "))
        }
        let grant = try ConsoleRun.run(["help", "grant"])
        #expect(grant.standardOutput.hasPrefix("usage: grant SUBJECT [SUBJECT] PRODUCT"))
        #expect(grant.standardOutput.contains("example: grant device:d1 prod_pro 30d source=app_store"))
    }

    // MARK: the lifecycle commands

    /// The membership id in the first row of a membership table.
    func membershipID(in table: String) throws -> String {
        let row = try #require(table.split(separator: "\n").dropFirst().first)
        return String(try #require(row.split(separator: " ").first))
    }

    @Test func historyOfAUserIsATableOfItsChangesNewestFirst() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        let grant = try ConsoleRun.run(port + ["grant", "device:d1", "prod_pro", "30d", "source=app_store", "reason=first purchase"])
        #expect(grant.status == 0)
        let id = try membershipID(in: grant.standardOutput)
        #expect(try ConsoleRun.run(port + ["claim", "device:d1", "user:u1", "reason=login"]).status == 0)
        #expect(try ConsoleRun.run(port + ["--yes", "revoke", id, "refund"]).status == 0)

        let history = try ConsoleRun.run(port + ["history", "user:u1"])
        #expect(history.status == 0)
        #expect(history.standardError.isEmpty)
        let lines = history.standardOutput.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.count == 4, "\(history.standardOutput)")
        #expect(lines.first == "TIME ACTOR ACTION MEMBERSHIP PRODUCT REASON")
        // Each row: the time, its hint "(just now)", then the actor, the action, the membership, the product
        // and the reason, newest first.
        #expect(lines.dropFirst().map { $0.split(separator: " ").dropFirst(3).joined(separator: " ") } == [
            "local revoke \(id) prod_pro refund",
            "local claim \(id) prod_pro login",
            "local grant \(id) prod_pro first purchase",
        ])
        #expect(lines.dropFirst().allSatisfy { $0.contains("Z (just now) local ") })

        // One entry of three: the table, then the command for the next page.
        let limited = try ConsoleRun.run(port + ["history", "user:u1", "limit=1"])
        let limitedLines = limited.standardOutput.split(separator: "\n")
        #expect(limitedLines.count == 3, "\(limited.standardOutput)")
        #expect(limitedLines.last?.hasPrefix("more: history user:u1 limit=1 after=") == true, "\(limited.standardOutput)")
        let nobody = try ConsoleRun.run(port + ["history", "device:nobody"])
        #expect(nobody.standardOutput == "(no history)\n")
        let badLimit = try ConsoleRun.run(port + ["history", "user:u1", "limit=5000"])
        #expect(badLimit.status == 1)
        #expect(badLimit.standardError == "(error) bad_request: field \"limit\" must be from 1 to 1000\n")
    }

    @Test func eventCustomerAndAReplayedGrantAgainstARealServer() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        #expect(try ConsoleRun.run(port + ["define", "pro", "prod_pro", "reason=launch"]).status == 0)
        let grantWords = ["grant", "user:u1", "prod_pro", "732h", "source=app_store", "renews=yes", "period=trial", "env=sandbox", "key=order-1"]
        let grant = try ConsoleRun.run(port + grantWords)
        #expect(grant.status == 0)
        #expect(grant.standardOutput.contains("  trialing  yes     "))
        #expect(grant.standardOutput.contains("(in 30 days)  yes     app_store (sandbox)  user:u1\n"))
        let id = try membershipID(in: grant.standardOutput)
        let replay = try ConsoleRun.run(port + grantWords)
        #expect(replay.status == 0)
        #expect(try membershipID(in: replay.standardOutput) == id)
        #expect(replay.standardOutput.hasSuffix("\nreplayed: this purchase (its key or its original transaction) was granted before; this is its membership, nothing new was created\n"))

        let issue = try ConsoleRun.run(port + ["event", id, "billing_issue", "id=evt_1", "grace=2099-01-01", "reason=card declined"])
        #expect(issue.status == 0, "\(issue.standardError)")
        #expect(issue.standardOutput.contains("  past_due  yes  "))
        #expect(issue.standardOutput.contains(", grace period until 2099-01-01T00:00:00Z (in "))
        #expect(issue.standardOutput.hasSuffix("\napplied\n"))
        let duplicate = try ConsoleRun.run(port + ["event", id, "billing_issue", "id=evt_1"])
        #expect(duplicate.status == 0)
        #expect(duplicate.standardOutput.hasSuffix("\nnot applied (duplicate): an event with this id was applied before; the membership is unchanged\n"))
        let missing = try ConsoleRun.run(port + ["event", id, "renewal", "id=evt_2"])
        // Refused by the console in its own words (until TIME), before the server would name the wire field.
        #expect(missing.status == 2)
        #expect(missing.standardError.hasPrefix("error: renewal needs `until TIME`: the new end of the period"))

        let customer = try ConsoleRun.run(port + ["customer", "user:u1"])
        #expect(customer.status == 0)
        let lines = customer.standardOutput.split(separator: "\n")
        #expect(lines.first?.hasPrefix("ENTITLEMENT  ACTIVE  PRODUCT   EXPIRES") == true, "\(customer.standardOutput)")
        #expect(lines.dropFirst().first?.hasPrefix("pro          yes     prod_pro  ") == true)
        #expect(lines.dropFirst().first?.contains(id) == true)
        #expect(lines.dropFirst(2).first == "active products: prod_pro")

        let catalogHistory = try ConsoleRun.run(port + ["history", "entitlement:pro"])
        #expect(catalogHistory.standardOutput.contains(" local  define  pro          prod_pro  launch\n"))
    }
}
