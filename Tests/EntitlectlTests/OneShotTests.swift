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
        #expect(lines.last?.contains("(in 30 days)  app_store  device:d1 (guest)") == true, "\(grant.standardOutput)")

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
        let run = try ConsoleRun.run(["--port", String(server.port), "revoke", "mem_0000000000000", "refund"])
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
                == "error: a PRODUCT is required\nusage: grant SUBJECT [SUBJECT] PRODUCT [DURATION | until TIME | lifetime] [source=SOURCE] [plan=PLAN]\n"
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
        #expect(grant.standardOutput.hasPrefix("{\"ok\":true,\"membership\":{\"id\":\"mem_"))
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

    @Test func tokenForAServerWithoutAuthenticationIsAWarningNotAFailure() throws {
        let server = try RunningEntitled()
        let run = try ConsoleRun.run(["--port", String(server.port), "ping"], environment: ["ENTITLED_TOKEN": "s3cret"])
        #expect(run.status == 0)
        #expect(run.standardOutput == "pong\n")
        #expect(run.standardError.contains("warning: 127.0.0.1:\(server.port) does not know the auth operation"))
        #expect(!run.standardError.contains("s3cret"))
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
        for name in ["check", "grant", "claim", "revoke", "show", "define", "catalog", "snapshot", "raw", "help"] {
            #expect(overview.standardOutput.contains("\n  \(name) "))
        }
        let grant = try ConsoleRun.run(["help", "grant"])
        #expect(grant.standardOutput.hasPrefix("usage: grant SUBJECT [SUBJECT] PRODUCT"))
        #expect(grant.standardOutput.contains("example: grant device:d1 prod_pro 30d source=app_store"))
    }
}
